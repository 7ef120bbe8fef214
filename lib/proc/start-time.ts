import { readFileSync } from "node:fs";

/**
 * Clock ticks a second in `/proc/<pid>/stat`'s start time. The kernel reports
 * it in USER_HZ, which is 100 on every architecture Linux runs Node or Deno on
 * (`getconf CLK_TCK`); neither runtime offers sysconf to ask.
 */
const TICKS_PER_SECOND = 100;

/**
 * How far `processStartedAt`'s answer may stand from the true start: two
 * clock ticks (20 ms), one for the start counted in ticks and one for the
 * boot moment read from `/proc/uptime` to 10 ms.
 */
export const START_TIME_PRECISION_MS = (2 * 1000) / TICKS_PER_SECOND;

/**
 * When a process started, as wall-clock time: its start time (field 22 of
 * `/proc/<pid>/stat`, clock ticks since boot) added to the moment of boot,
 * which is now minus `/proc/uptime` (both count from the same boot clock).
 * Both are cut to 10 ms, so the answer is within START_TIME_PRECISION_MS of the truth.
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
 * How far apart, in ms, the two clock reads around a read of `/proc/uptime`
 * may be for the boot moment to be taken from it, and how many reads to try
 * for that. The read may wait for a core between the two on a busy machine
 * (100 ms and more): a boot moment taken from such a read would stand that
 * much late, and every start time dated from it too.
 */
const BRACKET_MS = 2;
const BRACKET_TRIES = 20;

/**
 * When this boot began, as wall-clock time (now minus `/proc/uptime`, to
 * 10 ms); null when that cannot be read. A task of an earlier boot ended
 * before it. The uptime is read between two clock reads, again while those
 * are more than BRACKET_MS apart (up to BRACKET_TRIES times, keeping the
 * closest pair), so a wait for a core mid-read does not move the answer.
 *
 * @example
 * ```ts
 * import { bootedAt } from "./start-time.ts";
 * console.log(bootedAt()!.getTime() < Date.now()); // true
 * ```
 */
export function bootedAt(procRoot = "/proc"): Date | null {
  let best: { boot: number; apart: number } | null = null;
  for (let i = 0; i < BRACKET_TRIES && !(best && best.apart <= BRACKET_MS); i++) {
    const before = Date.now();
    let uptime: number;
    try {
      uptime = Number(readFileSync(`${procRoot}/uptime`, "latin1").split(" ")[0]);
    } catch {
      return null;
    }
    if (!Number.isFinite(uptime)) return null;
    const after = Date.now();
    if (!best || after - before < best.apart) best = { boot: (before + after) / 2 - uptime * 1000, apart: after - before };
  }
  return new Date(Math.round(best!.boot));
}
