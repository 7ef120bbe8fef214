// How soon an adopted task's end is observed after it writes its exit
// marker: a supervisor starts tasks blocked on a FIFO and closes; a second
// one adopts them; each FIFO is then written and the time until the second
// supervisor reports the task ended is taken.
// Run: npm run build && node dist/bench/adopted-exit.js [--tasks N]
import { execFileSync } from "node:child_process";
import { mkdtempSync, openSync, rmSync, writeSync, closeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Supervisor } from "../lib/mod.ts";
import { workingPlacements } from "./placements.ts";
import { quantile } from "./quantile.ts";

const { values } = parseArgs({ args: process.argv.slice(2), options: { tasks: { type: "string", default: "30" } } });
const N = Number(values.tasks);
const TARGET_MS = 50;
const prefix = `benchadopt${process.pid}`;

for (const name of await workingPlacements(prefix)) {
  const storage = mkdtempSync(join(tmpdir(), "outlive-bench-adopt-"));
  const options = { storage, placement: name, mode: "daemon" as const, prefix, log: () => {} };
  const first = await Supervisor.open(options);
  const fifos: string[] = [];
  const ids: string[] = [];
  for (let i = 0; i < N; i++) {
    const fifo = join(storage, `fifo-${i}`);
    execFileSync("mkfifo", [fifo]);
    fifos.push(fifo);
    ids.push((await first.run({ shell: `read line < ${fifo}; exit 3` })).id);
  }
  await first.close();
  const second = await Supervisor.open(options);
  if (second.replayReport.adopted.length !== N) throw new Error(`adopted ${second.replayReport.adopted.length} of ${N}`);
  const latencies: number[] = [];
  for (let i = 0; i < N; i++) {
    const done = second.wait(ids[i]);
    const t0 = performance.now();
    const fd = openSync(fifos[i], "w");
    writeSync(fd, "go\n");
    closeSync(fd);
    const record = await done;
    latencies.push(performance.now() - t0);
    if (record.exitCode !== 3) throw new Error(`task ${ids[i]} ended ${record.state} ${record.exitCode}`);
  }
  await second.close();
  rmSync(storage, { recursive: true, force: true });
  const median = quantile(latencies, 0.5);
  console.log(
    `${name.padEnd(14)} adopted exit observed: median ${median.toFixed(1)} ms, p90 ${quantile(latencies, 0.9).toFixed(1)} ms ` +
      `(from the FIFO write, which includes the task's own exit; target median <= ${TARGET_MS} ms) ${median <= TARGET_MS ? "ok" : "MISSED"}`,
  );
}
