#!/usr/bin/env node
/**
 * How long a restart costs the tasks: the time from "the daemon writes
 * cgroup.kill on the module's cgroup" to "the new module has replayed and
 * adopted all N tasks" (its `ready` event), for N = 10 and 200 tasks in
 * systemd user scopes, inside the container. N = 0 is the baseline measured
 * in the same run (a module's start-up alone), and the ratios are against it.
 *
 *   npx tsc && node dist/bench/restart-adopt.js [--systemd 252|257]
 *
 * The same file is the inside part: the scenario driver imports its default
 * export inside the container (as the user, in a delegated cgroup).
 */
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { bootContainer, describeFailure, type Suite } from "../harness/container/mod.ts";
import { defineScenario } from "../harness/scenario/define.ts";
import { runScenarioIn } from "../harness/scenario/host-run.ts";
import { SYSTEMD_SUITES } from "../harness/scenario/run-suites.ts";
import { median } from "./quantile.ts";

/** Task counts measured; 0 is the baseline. */
const COUNTS = [0, 10, 200];
/** Restarts per count; the median is reported. */
const ROUNDS = 3;

interface Row {
  tasks: number;
  /** cgroup.kill → the new module's `ready` (replayed, all adopted), per round. */
  killToAdoptedMs: number[];
  medianMs: number;
  /** Spawning the N tasks, for scale. */
  spawnAllMs: number;
}


const bench = defineScenario({
  name: "bench-restart-adopt",
  summary: "time from cgroup.kill to the new module having adopted N tasks",
  timeoutMs: 300_000,
  async inside(ctx) {
    const rows: Row[] = [];
    for (const n of COUNTS) {
      const d = ctx.daemon({ name: `n${n}`, storage: ctx.storageFor(`n${n}`), livenessMs: 1000 });
      await d.start();
      const t0 = Date.now();
      // In parallel batches, as a busy agent would start them; each is its own systemd-run.
      for (let i = 0; i < n; i += 20) {
        await Promise.all(Array.from({ length: Math.min(20, n - i) }, (_, j) => d.run({ id: `b${i + j}`, argv: ["sleep", "600"] })));
      }
      const spawnAllMs = Date.now() - t0;
      const times: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const mod = await d.restart("restart");
        const mark = d.sim.marks[d.sim.marks.length - 1];
        times.push(Date.parse(mark.readyAt!) - Date.parse(mark.killedAt!));
        ctx.check(`N=${n}, round ${r + 1}: all ${n} adopted`, mod.ready.replay.adopted.length === n, mod.ready.replay.adopted.length);
      }
      rows.push({ tasks: n, killToAdoptedMs: times, medianMs: median(times), spawnAllMs });
      ctx.log(`N=${n}: ${times.join(", ")} ms (median ${median(times)}), spawning took ${spawnAllMs} ms`);
      await d.stop("disable");
    }
    ctx.fact("rows", rows);
    ctx.fact("baselineMs", rows.find((r) => r.tasks === 0)?.medianMs);
  },
});
export default bench;

async function main(): Promise<void> {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { systemd: { type: "string", default: "257" } } });
  const suite: Suite | undefined = SYSTEMD_SUITES[values.systemd!];
  if (!suite) throw new Error(`Expected --systemd to be 252 or 257, got ${JSON.stringify(values.systemd)}`);
  let container;
  try {
    container = await bootContainer({ suite });
  } catch (error) {
    const { line, exitCode } = describeFailure(error);
    console.error(line);
    process.exit(exitCode);
  }
  try {
    const result = await runScenarioIn(container, bench.name, (l) => console.error(l), { file: fileURLToPath(import.meta.url), scenario: bench });
    const rows = (result.facts?.rows ?? []) as Row[];
    const base = rows.find((r) => r.tasks === 0)?.medianMs ?? NaN;
    console.log(`\nrestart-adopt on ${suite} (systemd ${result.systemd}), ${ROUNDS} restarts each, cgroup.kill → new module ready with all tasks adopted:`);
    console.log(`${"tasks".padStart(6)} ${"median".padStart(9)} ${"vs N=0".padStart(7)}  rounds (ms)            spawn all`);
    for (const r of rows) {
      console.log(`${String(r.tasks).padStart(6)} ${`${r.medianMs} ms`.padStart(9)} ${`${(r.medianMs / base).toFixed(2)}x`.padStart(7)}  ${r.killToAdoptedMs.join(", ").padEnd(22)} ${r.spawnAllMs} ms`);
    }
    if (result.verdict !== "pass") console.log(`(bench run ${result.verdict}: ${result.why})`);
    process.exitCode = result.verdict === "pass" ? 0 : 1;
  } finally {
    await container.teardown();
  }
}

const invoked = process.argv[1];
let isMain = false;
try {
  isMain = invoked !== undefined && realpathSync(invoked) === realpathSync(fileURLToPath(import.meta.url));
} catch {
  isMain = false;
}
if (isMain) await main();
