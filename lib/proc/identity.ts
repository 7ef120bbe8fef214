import { readCgroup } from "./cgroup.ts";
import { readProcStat } from "./stat.ts";

/** What makes a process the same one we saw before: pid plus start time. */
export interface ProcessIdentity {
  pid: number;
  startTime: string;
}

/** What the system says about a pid now. */
export interface LiveProcess extends ProcessIdentity {
  state: string;
  pgid: number;
  /** cgroup v2 path, or null where there is none. */
  cgroup: string | null;
}

/**
 * Looks at a pid now: null when no such process exists or it is a zombie
 * (a zombie runs nothing and its group cannot be signalled usefully).
 *
 * @example
 * ```ts
 * import { inspectPid } from "./identity.ts";
 * console.log(inspectPid(process.pid)?.pid === process.pid); // true
 * ```
 */
export function inspectPid(pid: number): LiveProcess | null {
  const stat = readProcStat(pid);
  if (!stat || hasExited(stat.state)) return null;
  const cgroup = readCgroup(pid);
  return { pid, startTime: stat.startTime, state: stat.state, pgid: stat.pgid, cgroup };
}

/**
 * True while `pid` names a process that has not exited: a zombie has, and
 * runs nothing. For "is it still there?"; to act on a recorded process, ask
 * `isSameProcess` instead.
 *
 * @example
 * ```ts
 * import { isRunning } from "./identity.ts";
 * console.log(isRunning(process.pid), isRunning(4_194_305)); // true false
 * ```
 */
export function isRunning(pid: number): boolean {
  const stat = readProcStat(pid);
  return stat !== null && !hasExited(stat.state);
}

/**
 * True when `pid` is alive and is the very process recorded (same start
 * time). Signal a recorded pid only after this says true.
 *
 * @example
 * ```ts
 * import { spawn } from "node:child_process";
 * import { isSameProcess } from "./identity.ts";
 * import { readProcStat } from "./stat.ts";
 * const child = spawn("sleep", ["30"]);
 * const recorded = { pid: child.pid!, startTime: readProcStat(child.pid!)!.startTime };
 * console.log(isSameProcess(recorded)); // true
 * child.kill("SIGKILL");
 * await new Promise((resolve) => child.once("exit", resolve));
 * console.log(isSameProcess(recorded)); // false: gone (a reused pid would have another start time)
 * ```
 */
export function isSameProcess(recorded: ProcessIdentity): boolean {
  const now = readProcStat(recorded.pid);
  return now !== null && !hasExited(now.state) && now.startTime === recorded.startTime;
}

/** A zombie (Z) or dead (X) process has exited: it runs nothing, and its group cannot be signalled usefully. */
function hasExited(state: string): boolean {
  return state === "Z" || state === "X";
}
