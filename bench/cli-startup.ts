// Start-up of the CLI, cold (a new process each time): `outlive --help`, and `outlive ps` on a storage of
// 1,000 finished tasks, each against `node -e 0` measured in the same rounds, interleaved.
// Targets: --help <= 2x, ps <= 3x.
// Run: npm run build && node dist/bench/cli-startup.js [--rounds 21] [--tasks 1000]
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { bootId, SCHEMA_VERSION, Supervisor, type TaskRecord, taskPaths } from "../lib/internal.ts";
import { median } from "./quantile.ts";

const { values } = parseArgs({ args: process.argv.slice(2), options: { rounds: { type: "string", default: "21" }, tasks: { type: "string", default: "1000" } } });
const ROUNDS = Number(values.rounds);
const TASKS = Number(values.tasks);
// The `outlive` a user runs: the package's bin, which runs the bundled CLI (dist/cli/, scripts/bundle-cli.ts).
const CLI = join(import.meta.dirname, "..", "scripts", "bin.js");
// The same CLI unbundled (dist/scripts/outlive.js), for what the bundle buys.
const UNBUNDLED = join(import.meta.dirname, "..", "scripts", "outlive.js");
if (!existsSync(join(import.meta.dirname, "..", "cli", "outlive.js"))) {
  console.error("bench/cli-startup: no bundled CLI at dist/cli/outlive.js; run node dist/scripts/bundle-cli.js (npm run build does) first");
  process.exit(2);
}
const boot = bootId();

/** `n` finished tasks a shell user left behind: record, exit marker and output each, none acknowledged. */
function addFinished(root: string, n: number): void {
  const now = Date.now();
  for (let i = 0; i < n; i++) {
    const id = `t-${i.toString(16).padStart(16, "0")}`;
    const p = taskPaths(root, id);
    mkdirSync(p.io, { recursive: true, mode: 0o700 });
    const at = new Date(now - (n - i) * 1000).toISOString();
    const record: TaskRecord = {
      schemaVersion: SCHEMA_VERSION, id, key: null, generation: null, command: { argv: ["make", "test"] }, cwd: "/",
      state: "exited", exitCode: 0, reason: "exited with code 0", createdAt: at, startedAt: at, finishedAt: at, lastOutputAt: at,
      outputTail: "ok\n", timeoutSeconds: null, deadlineAt: new Date(now + 86400_000).toISOString(), deadlineIsTimeout: false,
      memoryMaxBytes: null, pid: 4_000_000 + i, pgid: 4_000_000 + i, startTime: "12345", bootId: boot,
      incarnation: "i-bench", supervisorCgroup: null, placement: "process-group", location: {}, killStartedAt: null, killReason: null,
      killState: null, acknowledgedAt: null,
    };
    writeFileSync(p.record, JSON.stringify(record), { mode: 0o600 });
    writeFileSync(p.exit, "0\n", { mode: 0o600 });
    writeFileSync(p.stdout, "ok\n", { mode: 0o600 });
    writeFileSync(p.stderr, "", { mode: 0o600 });
  }
}

function timed(args: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`node ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return ms;
}

const root = mkdtempSync(join(tmpdir(), "outlive-bench-startup-"));
try {
  await (await Supervisor.open({ storage: root, placement: "process-group", control: false })).close();
  addFinished(root, TASKS);
  const series = { node: [] as number[], help: [] as number[], ps: [] as number[], psUnbundled: [] as number[] };
  // One unmeasured round warms the page cache, as a user's second command finds it.
  timed(["-e", "0"]), timed([CLI, "--help"]), timed([CLI, "ps", "--storage", root]);
  for (let i = 0; i < ROUNDS; i++) {
    series.node.push(timed(["-e", "0"]));
    series.help.push(timed([CLI, "--help"]));
    series.ps.push(timed([CLI, "ps", "--storage", root]));
    series.psUnbundled.push(timed([UNBUNDLED, "ps", "--storage", root]));
  }
  const base = median(series.node);
  const line = (what: string, xs: number[], target: number) => {
    const m = median(xs);
    const ratio = m / base;
    return `  ${what.padEnd(34)} median ${m.toFixed(1).padStart(6)} ms  (${ratio.toFixed(2)}x the baseline, target <= ${target}x)  ${ratio <= target ? "OK" : "OVER TARGET"}`;
  };
  console.log(`start-up of the CLI, cold (a new process each time), median of ${ROUNDS} interleaved rounds:`);
  console.log(`  ${"baseline, node -e 0".padEnd(34)} median ${base.toFixed(1).padStart(6)} ms`);
  console.log(line("outlive --help", series.help, 2));
  console.log(line(`outlive ps, ${TASKS} finished tasks`, series.ps, 3));
  const u = median(series.psUnbundled);
  console.log(`  ${"(ps unbundled, dist/scripts/)".padEnd(34)} median ${u.toFixed(1).padStart(6)} ms  (${(u / base).toFixed(2)}x the baseline, for comparison)`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
