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
  let uptime: number;
  try {
    uptime = Number(readFileSync(`${procRoot}/uptime`, "latin1").split(" ")[0]);
  } catch {
    return null;
  }
  if (!Number.isFinite(uptime)) return null;
  const bootMs = Date.now() - uptime * 1000;
  return new Date(Math.round(bootMs + (Number(startTime) * 1000) / TICKS_PER_SECOND));
}
