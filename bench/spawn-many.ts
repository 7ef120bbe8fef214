// 200 tasks started at once through the supervisor (run() each, then wait() for all) vs 200 bare
// child_process.spawn calls at once, both measured in this run, interleaved, per placement that works here.
// Throughput is tasks per second from the first start to the last exit; the ratio is ours / bare (target, issue 33:
// >= 0.6x). The supervisor runs its tasks under outlive-shim; a second one, interleaved, under the shell wrapper
// (shimPath: false; `--wrapper false` leaves it out). The floors, interleaved, start N tasks' processes and files
// alone, with no supervisor (bench/wrapper-floor.ts), the shim's chain and the wrapper's: the most any change to
// the supervisor could reach.
// Run: npm run build && node dist/bench/spawn-many.js [--tasks N] [--rounds R] [--wrapper true|false]
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Supervisor } from "../lib/mod.ts";
import { workingPlacements } from "./placements.ts";
import { median } from "./quantile.ts";
import { floorShim, shimFloor, wrapperFloor } from "./wrapper-floor.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { tasks: { type: "string", default: "200" }, rounds: { type: "string", default: "3" }, wrapper: { type: "string", default: "true" } },
});
const N = Number(values.tasks);
const ROUNDS = Number(values.rounds);
const TARGET = 0.6;
const WITH_WRAPPER = values.wrapper !== "false";
const shim = floorShim();

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

/** Tasks per second for N tasks' processes and files alone (no supervisor) started at once: the wrapper's, or the shim's. */
async function floorOf(dir: string, shimPath: string | null): Promise<number> {
  const t0 = performance.now();
  // As the supervisor hands them out (inotifyTasks, default 32): the first 32 live tasks watch with inotify, the rest poll.
  await Promise.all(Array.from({ length: N }, (_, i) => (shimPath ? shimFloor(dir, shimPath, { watch: i < 32 ? "inotify" : "poll" }) : wrapperFloor(dir))));
  return N / ((performance.now() - t0) / 1000);
}

const prefix = `benchmany${process.pid}`;
const load = () => readFileSync("/proc/loadavg", "latin1").split(" ").slice(0, 3).join(" ");
console.log(`${N} tasks of \`true\` started at once, median of ${ROUNDS} rounds (interleaved with the baseline); load ${load()}`);
if (shim.path === null) console.log(`  no shim: ${shim.why}`);
const range = (xs: number[]) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
for (const name of await workingPlacements(prefix, "  ")) {
  const storage = mkdtempSync(join(tmpdir(), "outlive-bench-many-"));
  const storageWrapped = mkdtempSync(join(tmpdir(), "outlive-bench-many-"));
  const sup = await Supervisor.open({ storage, placement: name, mode: "daemon", prefix, retention: false, log: () => {} });
  const wrapped = WITH_WRAPPER
    ? await Supervisor.open({ storage: storageWrapped, placement: name, mode: "daemon", prefix, retention: false, log: () => {}, shimPath: false })
    : null;
  const base: number[] = [];
  const ours: number[] = [];
  const ourWrapped: number[] = [];
  const shimChain: number[] = [];
  const floor: number[] = [];
  const floorDir = mkdtempSync(join(tmpdir(), "outlive-bench-many-floor-"));
  try {
    for (let i = 0; i < 5; i++) {
      await sup.wait((await sup.run({ argv: ["true"] })).id); // warm-up
      if (wrapped) await wrapped.wait((await wrapped.run({ argv: ["true"] })).id);
    }
    for (let i = 0; i < ROUNDS; i++) {
      base.push(await bare());
      ours.push(await through(sup));
      if (wrapped) ourWrapped.push(await through(wrapped));
      if (shim.path) shimChain.push(await floorOf(floorDir, shim.path));
      floor.push(await floorOf(floorDir, null));
    }
  } finally {
    await sup.close();
    await wrapped?.close();
    rmSync(storage, { recursive: true, force: true });
    rmSync(storageWrapped, { recursive: true, force: true });
    rmSync(floorDir, { recursive: true, force: true });
  }
  const b = median(base);
  const ratio = median(ours) / b;
  console.log(`  ${name}: ${sup.placementReason}`);
  console.log(
    `  ${name.padEnd(14)} outlive ${median(ours).toFixed(0)} tasks/s (${range(ours)}) vs bare spawn ${b.toFixed(0)} tasks/s (${range(base)}): ` +
      `${ratio.toFixed(2)}x (target >= ${TARGET}x) ${ratio >= TARGET ? "ok" : "MISSED"}`,
  );
  if (wrapped) {
    console.log(`    under the shell wrapper (shimPath: false) ${median(ourWrapped).toFixed(0)} tasks/s (${range(ourWrapped)}): ${(median(ourWrapped) / b).toFixed(2)}x`);
  }
  const floors: Array<[string, number[]]> = [...(shim.path ? [["the shim's chain", shimChain] as [string, number[]]] : []), ["the wrapper's chain", floor]];
  for (const [what, xs] of floors) {
    const floorRatio = median(xs) / b;
    console.log(
      `    the floor, ${what} alone, no supervisor ${median(xs).toFixed(0)} tasks/s (${range(xs)}): ${floorRatio.toFixed(2)}x` +
        (floorRatio < TARGET ? " (below the target: no change to the supervisor alone can meet it)" : ""),
    );
  }
}
console.log(`  load at the end ${load()}`);
