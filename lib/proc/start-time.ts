import { readFileSync } from "node:fs";

/**
 * Clock ticks a second in `/proc/<pid>/stat`'s start time. The kernel reports
 * it in USER_HZ, which is 100 on every architecture Linux runs Node or Deno on
 * (`getconf CLK_TCK`); neither runtime offers sysconf to ask.
 */
const TICKS_PER_SECOND = 100;

/**
 * When a process started, as wall-clock time: its start time (field 22 of
 * `/proc/<pid>/stat`, clock ticks since boot) added to the moment of boot,
 * which is now minus `/proc/uptime` (both count from the same boot clock).
 * Both are cut to 10 ms, so the answer is within about 20 ms of the truth.
 * Null when `/proc/uptime` cannot be read or `startTime` is not a tick count.
 *
 * @example
 * ```ts
 * import { processStartedAt } from "./start-time.ts";
 * import { readProcStat } from "./stat.ts";
 * const at = processStartedAt(readProcStat(process.pid)!.startTime)!;
 * console.log(Date.now() - at.getTime() < 60_000); // true: this process started a moment ago
 * ```
 */
export function processStartedAt(startTime: string, procRoot = "/proc"): Date | null {
  if (!/^\d+$/.test(startTime)) return null;
  const boot = bootedAt(procRoot);
  return boot && new Date(Math.round(boot.getTime() + (Number(startTime) * 1000) / TICKS_PER_SECOND));
}

/**
 * When this boot began, as wall-clock time (now minus `/proc/uptime`, to
 * 10 ms); null when that cannot be read. A task of an earlier boot ended
 * before it.
 *
 * @example
 * ```ts
 * import { bootedAt } from "./start-time.ts";
 * console.log(bootedAt()!.getTime() < Date.now()); // true
 * ```
 */
export function bootedAt(procRoot = "/proc"): Date | null {
  let uptime: number;
  try {
    uptime = Number(readFileSync(`${procRoot}/uptime`, "latin1").split(" ")[0]);
  } catch {
    return null;
  }
  return Number.isFinite(uptime) ? new Date(Math.round(Date.now() - uptime * 1000)) : null;
}
