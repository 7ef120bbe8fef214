// Spawn-to-exit of `true` through the supervisor vs a bare child_process.spawn,
// both measured in this run, per placement that works here. The supervisor runs its tasks under outlive-shim
// (found as a user's would be: lib/spawn/shim-path.ts), and, interleaved, a second supervisor runs them under
// the shell wrapper it replaces (shimPath: false), for comparison (`--wrapper false` leaves it out). A third
// series, interleaved, keeps the storage on tmpfs (/dev/shm), where fsync and file creation cost next to
// nothing: what no change to the record write path can beat, so the part of the overhead the writes are.
// Each step of the supervisor's spawn (its `onStep` reports, see lib/start/task-steps.ts) is printed
// under its row as a median gap, so what a spawn costs is told step by step. The floors, interleaved too,
// spawn the task's processes and files alone, with no supervisor (bench/wrapper-floor.ts): the shim's chain,
// the wrapper's, and the wrapper's without its warden: what no change to the supervisor can go below.
// Target (issues 24, 33): process-group and cgroup-v2 <= 2.0x a bare spawn.
// Run: npm run build && node dist/bench/spawn.js [--rounds N] [--wrapper true|false] [--container bookworm,trixie [--as user|root]]
// (--container runs it inside each systemd container, where systemd-scope works too.)
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Supervisor, type TaskStep } from "../lib/mod.ts";
import { parseSuites, runBenchInContainer } from "./in-container.ts";
import { workingPlacements } from "./placements.ts";
import { median } from "./quantile.ts";
import { floorShim, shimFloor, wrapperFloor } from "./wrapper-floor.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    rounds: { type: "string", default: "60" },
    wrapper: { type: "string", default: "true" },
    container: { type: "string" },
    as: { type: "string", default: "user" },
  },
});
if (values.container) {
  let rc = 0;
  for (const suite of parseSuites(values.container)) {
    rc ||= await runBenchInContainer(suite, "spawn.js", ["--rounds", values.rounds!, "--wrapper", values.wrapper!], values.as === "root" ? "root" : "user");
  }
  process.exit(rc);
}
const ROUNDS = Number(values.rounds);
const WITH_WRAPPER = values.wrapper !== "false";
const shim = floorShim();
// Issue 24: a spawn at most twice a bare one (process-group, cgroup-v2); systemd-scope has its own bench (bench/systemd-scope.ts).
const TARGET = 2.0;
const TMPFS_MAGIC = 0x01021994;
const tmpfsDir = existsSync("/dev/shm") && statfsSync("/dev/shm").type === TMPFS_MAGIC ? "/dev/shm" : null;

async function bare(): Promise<number> {
  const t0 = performance.now();
  await new Promise((r) => spawn("true", { stdio: "ignore" }).once("exit", r));
  return performance.now() - t0;
}

/** The steps heard per task, and when `run` was called and `wait` resolved. */
const steps = new Map<string, Partial<Record<TaskStep | "called" | "waited", number>>>();
const onStep = (id: string, step: TaskStep, at: number) => {
  const s = steps.get(id) ?? {};
  s[step] = at;
  steps.set(id, s);
};

async function through(sup: Supervisor, keep?: string[]): Promise<number> {
  const t0 = performance.now();
  const task = await sup.run({ argv: ["true"] });
  await sup.wait(task.id);
  const t1 = performance.now();
  const s = steps.get(task.id)!;
  // The `ended` step follows the terminal write, which `wait` may beat (it answers with the end once decided).
  while (s.ended === undefined) await new Promise((r) => setTimeout(r, 1));
  s.called = t0;
  s.waited = t1;
  keep?.push(task.id);
  return t1 - t0;
}

/** Median gap per step of the kept tasks. `decided` may come before `running` (a task that ends at once). */
function breakdown(ids: string[]): string {
  const gaps: Array<[string, (s: Record<string, number>) => number]> = [
    ["lookup + starting record", (s) => s.recorded - s.called],
    ["plan", (s) => s.planned - s.recorded],
    // With a spawner: the request's way to it, then its files and fork; without one, no request (0) and the fork here.
    ["request to the spawner", (s) => (s.sent ?? s.planned) - s.planned],
    ["files + fork", (s) => s.forked - (s.sent ?? s.planned)],
    ["into its placement", (s) => s.placed - s.forked],
    ["command pid", (s) => s["command-pid"] - s.placed],
    ["running record", (s) => s.running - s["command-pid"]],
    ["(fork to end seen)", (s) => s.decided - s.forked],
    ["terminal record", (s) => s.ended - Math.max(s.decided, s.running)],
    ["(end decided to wait resolved)", (s) => s.waited - Math.max(s.decided, s.running)],
  ];
  const all = ids.map((id) => steps.get(id) as Record<string, number>);
  return gaps.map(([name, gap]) => `${name} ${median(all.map(gap)).toFixed(2)}`).join(", ");
}

const prefix = `bench${process.pid}`;
const load = () => readFileSync("/proc/loadavg", "latin1").split(" ").slice(0, 3).join(" ");
console.log(`spawn-to-exit of \`true\`, median of ${ROUNDS} (interleaved with the baseline); load ${load()}`);
if (!tmpfsDir) console.log("  the tmpfs series is skipped: /dev/shm is not a tmpfs here");
if (shim.path === null) console.log(`  no shim: ${shim.why}`);
for (const name of await workingPlacements(prefix, "  ")) {
  const storages: string[] = [];
  const open = (dir: string, o: { shimPath?: false } = {}) => {
    storages.push(mkdtempSync(join(dir, "outlive-bench-spawn-")));
    return Supervisor.open({ storage: storages.at(-1)!, placement: name, mode: "daemon", prefix, log: () => {}, onStep, ...o });
  };
  const sup = await open(tmpdir());
  const wrapped = WITH_WRAPPER ? await open(tmpdir(), { shimPath: false }) : null;
  const onTmpfs = tmpfsDir ? await open(tmpfsDir) : null;
  const base: number[] = [];
  const ours: number[] = [];
  const ourWrapped: number[] = [];
  const bound: number[] = [];
  const kept: string[] = [];
  const keptWrapped: string[] = [];
  const shimChain: number[] = [];
  const floor: number[] = [];
  const noWarden: number[] = [];
  const floorDir = mkdtempSync(join(tmpdir(), "outlive-bench-floor-"));
  storages.push(floorDir);
  for (let i = 0; i < 5; i++) {
    await through(sup); // warm-up
    if (wrapped) await through(wrapped);
    if (onTmpfs) await through(onTmpfs);
  }
  for (let i = 0; i < ROUNDS; i++) {
    base.push(await bare());
    ours.push(await through(sup, kept));
    if (wrapped) ourWrapped.push(await through(wrapped, keptWrapped));
    if (onTmpfs) bound.push(await through(onTmpfs));
    if (shim.path) shimChain.push(await shimFloor(floorDir, shim.path));
    floor.push(await wrapperFloor(floorDir));
    noWarden.push(await wrapperFloor(floorDir, { warden: false }));
  }
  await sup.close();
  await wrapped?.close();
  await onTmpfs?.close();
  for (const dir of storages) rmSync(dir, { recursive: true, force: true });
  const b = median(base);
  const ratio = median(ours) / b;
  console.log(`  ${name}: ${sup.placementReason}`);
  console.log(
    `  ${name.padEnd(14)} outlive ${median(ours).toFixed(2)} ms vs bare spawn ${b.toFixed(2)} ms: ` +
      `${ratio.toFixed(2)}x (target <= ${TARGET}x) ${ratio <= TARGET ? "ok" : "MISSED"}` +
      (onTmpfs ? `; storage on tmpfs ${median(bound).toFixed(2)} ms: ${(median(bound) / b).toFixed(2)}x` : ""),
  );
  console.log(`    its steps (median ms): ${breakdown(kept)}`);
  if (wrapped) {
    console.log(`    under the shell wrapper (shimPath: false) ${median(ourWrapped).toFixed(2)} ms: ${(median(ourWrapped) / b).toFixed(2)}x`);
    console.log(`    its steps (median ms): ${breakdown(keptWrapped)}`);
  }
  const chainRatio = median(shimChain) / b;
  if (shim.path) {
    console.log(
      `    the floor: the shim's chain alone, no supervisor ${median(shimChain).toFixed(2)} ms: ${chainRatio.toFixed(2)}x ` +
        `(${chainRatio >= TARGET ? "at or above the target: no change to the supervisor alone can meet it" : `leaves ${((TARGET - chainRatio) * b).toFixed(2)} ms for the supervisor`})`,
    );
  }
  console.log(
    `    the wrapper's floor ${median(floor).toFixed(2)} ms: ${(median(floor) / b).toFixed(2)}x; ` +
      `without the warden (no deadline, no output bound) ${median(noWarden).toFixed(2)} ms: ${(median(noWarden) / b).toFixed(2)}x`,
  );
  steps.clear();
}
console.log(`  load at the end ${load()}`);
