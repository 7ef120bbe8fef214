// 200 tasks started at once through the supervisor (run() each, then wait() for all) vs 200 bare
// child_process.spawn calls at once, both measured in this run, interleaved, per placement that works here.
// Throughput is tasks per second from the first start to the last exit; the ratio is ours / bare (target >= 0.5x).
// A third series, interleaved, starts N tasks' processes and files alone, with no supervisor
// (bench/wrapper-floor.ts): the most any change to the supervisor could reach.
// Run: npm run build && node dist/bench/spawn-many.js [--tasks N] [--rounds R]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Supervisor } from "../lib/mod.ts";
import { workingPlacements } from "./placements.ts";
import { median } from "./quantile.ts";
import { wrapperFloor } from "./wrapper-floor.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { tasks: { type: "string", default: "200" }, rounds: { type: "string", default: "3" } },
});
const N = Number(values.tasks);
const ROUNDS = Number(values.rounds);
const TARGET = 0.5;

/** Tasks per second for N bare spawns of `true` started at once. */
async function bare(): Promise<number> {
  const t0 = performance.now();
  await Promise.all(Array.from({ length: N }, () => new Promise((r) => spawn("true", { stdio: "ignore" }).once("exit", r))));
  return N / ((performance.now() - t0) / 1000);
}

/** Tasks per second for N `sup.run` of `true` started at once, each waited for to its terminal record. */
async function through(sup: Supervisor): Promise<number> {
  const t0 = performance.now();
  await Promise.all(Array.from({ length: N }, async () => sup.wait((await sup.run({ argv: ["true"] })).id)));
  return N / ((performance.now() - t0) / 1000);
}

/** Tasks per second for N tasks' processes and files alone (no supervisor) started at once. */
async function floorOf(dir: string): Promise<number> {
  const t0 = performance.now();
  await Promise.all(Array.from({ length: N }, () => wrapperFloor(dir)));
  return N / ((performance.now() - t0) / 1000);
}

const prefix = `benchmany${process.pid}`;
console.log(`${N} tasks of \`true\` started at once, median of ${ROUNDS} rounds (interleaved with the baseline)`);
for (const name of await workingPlacements(prefix, "  ")) {
  const storage = mkdtempSync(join(tmpdir(), "outlive-bench-many-"));
  const sup = await Supervisor.open({ storage, placement: name, mode: "daemon", prefix, retention: false, log: () => {} });
  const base: number[] = [];
  const ours: number[] = [];
  const floor: number[] = [];
  const floorDir = mkdtempSync(join(tmpdir(), "outlive-bench-many-floor-"));
  try {
    for (let i = 0; i < 5; i++) await sup.wait((await sup.run({ argv: ["true"] })).id); // warm-up
    for (let i = 0; i < ROUNDS; i++) {
      base.push(await bare());
      ours.push(await through(sup));
      floor.push(await floorOf(floorDir));
    }
  } finally {
    await sup.close();
    rmSync(storage, { recursive: true, force: true });
    rmSync(floorDir, { recursive: true, force: true });
  }
  const ratio = median(ours) / median(base);
  const range = (xs: number[]) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
  console.log(
    `  ${name.padEnd(14)} outlive ${median(ours).toFixed(0)} tasks/s (${range(ours)}) vs bare spawn ${median(base).toFixed(0)} tasks/s (${range(base)}): ` +
      `${ratio.toFixed(2)}x (target >= ${TARGET}x) ${ratio >= TARGET ? "ok" : "MISSED"}`,
  );
  const floorRatio = median(floor) / median(base);
  console.log(
    `    the floor: the tasks' processes and files alone, no supervisor ${median(floor).toFixed(0)} tasks/s (${range(floor)}): ${floorRatio.toFixed(2)}x` +
      (floorRatio < TARGET ? " (below the target: no change to the supervisor alone can meet it)" : ""),
  );
}
