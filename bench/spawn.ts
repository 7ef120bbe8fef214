// Spawn-to-exit of `true` through the supervisor vs a bare child_process.spawn,
// both measured in this run, per placement that works here. A third series, interleaved, keeps the storage
// on tmpfs (/dev/shm), where fsync and file creation cost next to nothing: what no change to the record
// write path can beat, so the part of the overhead the writes are.
// Each step of the supervisor's spawn (its `onStep` reports, see lib/start/task-steps.ts) is printed
// under its row as a median gap, so what a spawn costs is told step by step. A fourth series, interleaved too,
// spawns the task's processes and files alone, with no supervisor (bench/wrapper-floor.ts): the floor no change
// to the supervisor can go below; and once more without the warden, so what the warden costs is told apart.
// Run: npm run build && node dist/bench/spawn.js [--rounds N] [--container bookworm,trixie [--as user|root]]
// (--container runs it inside each systemd container, where systemd-scope works too.)
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Supervisor, type TaskStep } from "../lib/mod.ts";
import { parseSuites, runBenchInContainer } from "./in-container.ts";
import { workingPlacements } from "./placements.ts";
import { median } from "./quantile.ts";
import { wrapperFloor } from "./wrapper-floor.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { rounds: { type: "string", default: "60" }, container: { type: "string" }, as: { type: "string", default: "user" } },
});
if (values.container) {
  let rc = 0;
  for (const suite of parseSuites(values.container)) {
    rc ||= await runBenchInContainer(suite, "spawn.js", ["--rounds", values.rounds!], values.as === "root" ? "root" : "user");
  }
  process.exit(rc);
}
const ROUNDS = Number(values.rounds);
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
console.log(`spawn-to-exit of \`true\`, median of ${ROUNDS} (interleaved with the baseline)`);
if (!tmpfsDir) console.log("  the tmpfs series is skipped: /dev/shm is not a tmpfs here");
for (const name of await workingPlacements(prefix, "  ")) {
  const storages: string[] = [];
  const open = (dir: string) => {
    storages.push(mkdtempSync(join(dir, "outlive-bench-spawn-")));
    return Supervisor.open({ storage: storages.at(-1)!, placement: name, mode: "daemon", prefix, log: () => {}, onStep });
  };
  const sup = await open(tmpdir());
  const onTmpfs = tmpfsDir ? await open(tmpfsDir) : null;
  const base: number[] = [];
  const ours: number[] = [];
  const bound: number[] = [];
  const kept: string[] = [];
  const floor: number[] = [];
  const noWarden: number[] = [];
  const floorDir = mkdtempSync(join(tmpdir(), "outlive-bench-floor-"));
  storages.push(floorDir);
  for (let i = 0; i < 5; i++) {
    await through(sup); // warm-up
    if (onTmpfs) await through(onTmpfs);
  }
  for (let i = 0; i < ROUNDS; i++) {
    base.push(await bare());
    ours.push(await through(sup, kept));
    if (onTmpfs) bound.push(await through(onTmpfs));
    floor.push(await wrapperFloor(floorDir));
    noWarden.push(await wrapperFloor(floorDir, { warden: false }));
  }
  await sup.close();
  await onTmpfs?.close();
  for (const dir of storages) rmSync(dir, { recursive: true, force: true });
  const ratio = median(ours) / median(base);
  console.log(
    `  ${name.padEnd(14)} outlive ${median(ours).toFixed(2)} ms vs bare spawn ${median(base).toFixed(2)} ms: ` +
      `${ratio.toFixed(2)}x (target <= ${TARGET}x) ${ratio <= TARGET ? "ok" : "MISSED"}` +
      (onTmpfs ? `; storage on tmpfs ${median(bound).toFixed(2)} ms: ${(median(bound) / median(base)).toFixed(2)}x` : ""),
  );
  console.log(`    its steps (median ms): ${breakdown(kept)}`);
  const floorRatio = median(floor) / median(base);
  console.log(
    `    the floor: the task's processes and files alone, no supervisor ${median(floor).toFixed(2)} ms: ${floorRatio.toFixed(2)}x ` +
      `(${floorRatio >= TARGET ? "at or above the target: no change to the supervisor alone can meet it" : `leaves ${((TARGET - floorRatio) * median(base)).toFixed(2)} ms for the supervisor`}); ` +
      `without the warden (no deadline, no output bound) ${median(noWarden).toFixed(2)} ms: ${(median(noWarden) / median(base)).toFixed(2)}x`,
  );
  steps.clear();
}
