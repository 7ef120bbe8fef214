// What port discovery costs one `outlive ps` (issue 34): 100 running tasks, each a python listener on a port of
// its own, in one storage; `ps` and `ps --no-ports` (the same command without the /proc scan for ports) run
// interleaved, ROUNDS times each, each in a process of its own. The figure is the difference of the medians, and
// the ratio of the two; and the scan alone in process (portsOfTasks over the 100 records), for where it goes.
// Target: port discovery adds <= 50 ms to one ps.
// Run: npm run build && node dist/bench/ports-ps.js [--tasks 100] [--rounds 15]
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { portsOfTasks, Supervisor } from "../lib/internal.ts";
import { median } from "./quantile.ts";

const { values } = parseArgs({ args: process.argv.slice(2), options: { tasks: { type: "string", default: "100" }, rounds: { type: "string", default: "15" } } });
const TASKS = Number(values.tasks);
const ROUNDS = Number(values.rounds);
const CLI = join(import.meta.dirname, "..", "scripts", "bin.js");
const storage = mkdtempSync(join(tmpdir(), "outlive-bench-ports-"));
const LISTENER = "import socket, time\ns = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\nprint(s.getsockname()[1], flush=True)\ntime.sleep(86400)";

console.log(`bench/ports-ps: ${TASKS} running tasks, ${ROUNDS} rounds, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
const sup = await Supervisor.open({ storage, mode: "standalone", control: false });
try {
  const started = [];
  for (let i = 0; i < TASKS; i++) started.push(await sup.run({ argv: ["python3", "-c", LISTENER] }));
  // Each listening before the rounds: the scan finds one port a task.
  for (const until = Date.now() + 60_000; ;) {
    const found = sup.ports(started);
    if ([...found.values()].filter((p) => p.length === 1).length === TASKS) break;
    if (Date.now() > until) throw new Error("not every listener came up within 60 s");
    await new Promise((r) => setTimeout(r, 100));
  }
  await sup.close();
  const ps = (extra: string[]) => {
    const t = performance.now();
    const r = spawnSync(process.execPath, ["--", CLI, "ps", "--storage", storage, ...extra], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`ps failed: ${r.stderr}`);
    return { ms: performance.now() - t, out: r.stdout };
  };
  const withPorts: number[] = [];
  const without: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const a = ps([]);
    if (i === 0 && (a.out.match(/127\.0\.0\.1:\d+/g) ?? []).length !== TASKS) throw new Error(`ps showed ${(a.out.match(/127\.0\.0\.1:\d+/g) ?? []).length} ports, not ${TASKS}`);
    withPorts.push(a.ms);
    without.push(ps(["--no-ports"]).ms);
  }
  const scan: number[] = [];
  const records = (await Supervisor.open({ storage, mode: "standalone", control: false, readOnly: true }).then(async (v) => {
    const list = v.list();
    await v.close();
    return list;
  }));
  for (let i = 0; i < ROUNDS; i++) {
    const t = performance.now();
    portsOfTasks(records);
    scan.push(performance.now() - t);
  }
  const added = median(withPorts) - median(without);
  console.log(`ps with ports ${median(withPorts).toFixed(1)} ms, --no-ports ${median(without).toFixed(1)} ms (medians): discovery adds ${added.toFixed(1)} ms, ${(median(withPorts) / median(without)).toFixed(2)}x; target <= 50 ms: ${added <= 50 ? "met" : "missed"}`);
  console.log(`the scan alone, in process, over ${records.length} records: ${median(scan).toFixed(1)} ms (median)`);
} finally {
  spawnSync(process.execPath, ["--", CLI, "stop-all", "--storage", storage], { stdio: "ignore" });
  rmSync(storage, { recursive: true, force: true });
}
console.log(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
