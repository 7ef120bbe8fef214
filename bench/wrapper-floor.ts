// The floor under a task's spawn: the processes and files a task is, with nothing of the supervisor around
// them. One `true` task as the supervisor hands it to the kernel (lib/spawn: the wrapper with its warden,
// the default deadline, output bound and grace, its command-pid file; its output files, the exit marker on
// fd 3 and the watchdog's reserve made first), spawned straight from this process and waited for: no record,
// no placement, no spawner, no observation. What the benchmarks print beside it tells how much of a task's
// cost is this chain, which no change to the supervisor can remove.
import { mkdirSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { TRIM_SCRIPT } from "../lib/output/trim-loop.ts";
import { spawnFilesOf, spawnTask } from "../lib/spawn/spawn-task.ts";
import { wrapperArgv } from "../lib/spawn/wrapper.ts";
import { taskPaths } from "../lib/store/layout.ts";

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

