import { readFileSync } from "node:fs";
import { readProcStat } from "../proc/stat.ts";
import { cgroupProcs } from "./cgroup-fs.ts";
import { isShimArgv } from "../spawn/command-pid.ts";
import { WRAPPER_NAME } from "../spawn/wrapper.ts";

/**
 * The task's first process among the processes of a task's cgroup: the
 * leader of its own session running outlive-shim (`outlive-shim ID`) or
 * outlive's shell wrapper (`$0` is WRAPPER_NAME). Used to
 * find a task whose spawn was cut short before its pid was recorded; null
 * when the cgroup is gone or holds no such process.
 *
 * @example
 * ```ts
 * import { wrapperLeaderIn } from "./wrapper-leader.ts";
 * console.log(wrapperLeaderIn("/nonexistent/cgroup")); // null
 * ```
 */
export function wrapperLeaderIn(cgroupDir: string): { pid: number; startTime: string } | null {
  for (const pid of cgroupProcs(cgroupDir)) {
    if (!Number.isInteger(pid) || pid <= 0) continue;
    let stat;
    try {
      stat = readProcStat(pid);
    } catch {
      continue;
    }
    if (!stat || stat.state === "Z" || stat.sid !== pid || stat.pgid !== pid) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    if (isShimArgv(argv) || (argv[0] === "/bin/sh" && argv[1] === "-c" && argv[3] === WRAPPER_NAME)) return { pid, startTime: stat.startTime };
  }
  return null;
}
