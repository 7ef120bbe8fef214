// The floor under a task's spawn: the processes and files a task is, with nothing of the supervisor around
// them. One `true` task as the supervisor hands it to the kernel (lib/spawn: the wrapper with its warden,
// the default deadline, output bound and grace, its command-pid file; its output files, the exit marker on
// fd 3 and the watchdog's reserve made first), spawned straight from this process and waited for: no record,
// no placement, no spawner, no observation. What the benchmarks print beside it tells how much of a task's
// cost is this chain, which no change to the supervisor can remove.
// `shimFloor` is the same for outlive-shim (issue 33): the task's program exactly as lib/spawn/task-program.ts
// `taskProgram` gives it (the shim, its settings on stdin, argv[0] its name) and lib/spawn/spawn-task.ts
// `spawnTask` starts it, with the same files, deadline, grace and output bound.
// Run on its own, it prints each chain against a bare child_process.spawn of `true`, interleaved, round by
// round: the shim's chain (target <= 1.3x a bare spawn), polling instead of inotify, the wrapper's, and the
// wrapper's without its warden; and what the shim's chain is made of: the shim's process alone (its files made
// before the clock starts), and the files alone (spawnTask making them, then a bare spawn of `true`).
// Run: npm run build && node dist/bench/wrapper-floor.js [--rounds 100]
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, realpathSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { TRIM_SCRIPT } from "../lib/output/trim-loop.ts";
import { findShim } from "../lib/spawn/shim-path.ts";
import { EXIT_MARKER_PLACEHOLDER } from "../lib/observe/exit-marker.ts";
import { type SpawnFiles, spawnFilesOf, spawnTask } from "../lib/spawn/spawn-task.ts";
import { taskProgram } from "../lib/spawn/task-program.ts";
import { wrapperArgv } from "../lib/spawn/wrapper.ts";
import { taskPaths } from "../lib/store/layout.ts";
import type { TaskRecord } from "../lib/store/record/record.ts";
import { median } from "./quantile.ts";

/** The supervisor's defaults a task gets (lib/supervisor/options.ts): ceiling, grace, output bound. */
const CEILING_SECONDS = 86_400;
const GRACE_MS = 2000;
const MAX_OUTPUT_BYTES = 32 * 1024 * 1024;

let serial = 0;

/**
 * Spawns one `true` task chain under `root` (a fresh task directory each time) and resolves with ms to its
 * exit. `warden: false` leaves out the deadline and the output bound, and so the warden (the shell the wrapper
 * forks to keep them, with its `sleep`): the wrapper, its subshell and the command alone.
 */
export async function wrapperFloor(root: string, o: { warden?: boolean } = {}): Promise<number> {
  const warden = o.warden ?? true;
  const paths = taskPaths(root, `floor-${process.pid}-${serial++}`);
  mkdirSync(paths.io, { recursive: true });
  const t0 = performance.now();
  const argv = wrapperArgv({
    command: { argv: ["true"] },
    enterCgroupProcs: null,
    deadlineSeconds: warden ? CEILING_SECONDS : 0,
    graceMs: GRACE_MS,
    timedOutFile: paths.timedOut,
    trim: warden ? { script: TRIM_SCRIPT, maxBytes: MAX_OUTPUT_BYTES } : null,
    commandPidFile: paths.commandPid,
  });
  const { child } = await spawnTask(argv, { cwd: root, env: process.env, files: spawnFilesOf(paths) });
  // spawnTask lets go of the child (a task outlives its supervisor); waited for here, it must hold the loop open.
  child.ref();
  if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once("exit", r));
  return performance.now() - t0;
}


/** The shim a task would run under here (findShim's rules: OUTLIVE_SHIM, the package, the build), or null and why. */
export function floorShim(): { path: string; why?: undefined } | { path: null; why: string } {
  const found = findShim();
  return found.path === null ? { path: null, why: found.reason } : { path: found.path };
}

/**
 * Spawns one `true` task under outlive-shim at `shim` (a fresh task directory under `root` each time), exactly
 * as the supervisor hands it to the kernel with the process-group placement (no prefix), and resolves with ms
 * to its exit: its settings (the default deadline, grace and output bound, `watch`, the command-pid file) on
 * stdin, its name as argv[0], the output files, exit marker and reserve made first.
 */
export async function shimFloor(root: string, shim: string, o: { watch?: "inotify" | "poll"; filesFirst?: boolean } = {}): Promise<number> {
  const id = `floor-${process.pid}-${serial++}`;
  const paths = taskPaths(root, id);
  mkdirSync(paths.io, { recursive: true });
  const files = spawnFilesOf(paths);
  const stdio = o.filesFirst ? openFiles(files) : null;
  const t0 = performance.now();
  const record = { id, command: { argv: ["true"] }, pty: null, maxOutputBytes: MAX_OUTPUT_BYTES } as unknown as TaskRecord;
  const program = taskProgram({
    record,
    paths,
    shim,
    enterCgroupProcs: null,
    deadlineSeconds: CEILING_SECONDS,
    graceMs: GRACE_MS,
    watch: o.watch ?? "inotify",
    env: process.env,
  });
  if (stdio) {
    // The files made before the clock started: the shim's process alone, spawned as spawnTask does.
    const child = spawn(program.argv[0], program.argv.slice(1), { cwd: root, env: process.env, detached: true, stdio: ["pipe", ...stdio], argv0: program.argv0! });
    child.stdin!.on("error", () => {});
    child.stdin!.end(program.stdin);
    await new Promise((r) => child.once("exit", r));
    const ms = performance.now() - t0;
    for (const fd of stdio) closeSync(fd);
    return ms;
  }
  const { child } = await spawnTask(program.argv, { cwd: root, env: process.env, files, stdin: program.stdin, argv0: program.argv0 });
  child.ref();
  if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once("exit", r));
  return performance.now() - t0;
}

/** A task's stdout, stderr and exit marker (with its placeholder) and the reserve, made as spawnTask makes them; their fds. */
function openFiles(files: SpawnFiles): [number, number, number] {
  const exit = openSync(files.exit, "wx", 0o600);
  writeSync(exit, EXIT_MARKER_PLACEHOLDER, 0);
  closeSync(openSync(files.timedOutReserve, "w", 0o600));
  return [openSync(files.stdout, "a", 0o600), openSync(files.stderr, "a", 0o600), exit];
}

/** ms to the exit of `true` spawned by spawnTask, with a task's files made first: what the files add to a bare spawn. */
export async function filesAndBareSpawn(root: string): Promise<number> {
  const paths = taskPaths(root, `floor-${process.pid}-${serial++}`);
  mkdirSync(paths.io, { recursive: true });
  const t0 = performance.now();
  const { child } = await spawnTask(["true"], { cwd: root, env: process.env, files: spawnFilesOf(paths) });
  child.ref();
  if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once("exit", r));
  return performance.now() - t0;
}

/** ms to the exit of a bare child_process.spawn of `true`: the baseline of every floor. */
export async function bareSpawn(): Promise<number> {
  const t0 = performance.now();
  await new Promise((r) => spawn("true", { stdio: "ignore" }).once("exit", r));
  return performance.now() - t0;
}

/** Issue 33: the shim's chain at most this many times a bare spawn. */
export const SHIM_FLOOR_TARGET = 1.3;

async function main(): Promise<void> {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { rounds: { type: "string", default: "100" } } });
  const rounds = Number(values.rounds);
  const shim = floorShim();
  const load = () => readFileSync("/proc/loadavg", "latin1").split(" ").slice(0, 3).join(" ");
  console.log(`a task's chain alone (no supervisor) vs a bare spawn of \`true\`, median of ${rounds} interleaved rounds; load ${load()}`);
  if (shim.path === null) console.log(`  the shim's series is skipped: ${shim.why}`);
  const root = mkdtempSync(join(tmpdir(), "outlive-bench-floor-"));
  const runs: Record<string, () => Promise<number>> = {
    bare: bareSpawn,
    ...(shim.path
      ? {
        shim: () => shimFloor(root, shim.path),
        "shim, watch=poll": () => shimFloor(root, shim.path, { watch: "poll" }),
        // What the chain is made of: the shim's process alone (its files made before the clock starts), and the files alone.
        "shim alone, files made first": () => shimFloor(root, shim.path, { filesFirst: true }),
        "shim alone, files first, poll": () => shimFloor(root, shim.path, { filesFirst: true, watch: "poll" }),
      }
      : {}),
    "the files + a bare spawn": () => filesAndBareSpawn(root),
    wrapper: () => wrapperFloor(root),
    "wrapper without its warden": () => wrapperFloor(root, { warden: false }),
  };
  const names = Object.keys(runs);
  const series: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  try {
    for (let i = 0; i < 5; i++) for (const n of names) await runs[n]();
    for (let i = 0; i < rounds; i++) {
      // The order rotates, so no series always follows the same one.
      for (let k = 0; k < names.length; k++) {
        const n = names[(i + k) % names.length];
        series[n].push(await runs[n]());
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const base = median(series.bare);
  console.log(`  bare spawn ${base.toFixed(2)} ms`);
  for (const n of names.filter((x) => x !== "bare")) {
    const ratio = median(series[n]) / base;
    const target = n === "shim" ? ` (target <= ${SHIM_FLOOR_TARGET}x) ${ratio <= SHIM_FLOOR_TARGET ? "ok" : "MISSED"}` : "";
    console.log(`  ${n.padEnd(30)} ${median(series[n]).toFixed(2)} ms: ${ratio.toFixed(2)}x${target}`);
  }
  console.log(`  load at the end ${load()}`);
}

let isMain = false;
try {
  isMain = process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
} catch {
  isMain = false;
}
if (isMain) await main();
