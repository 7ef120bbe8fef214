/** The CPU and process limits of a task, beside its memory cap; null where not asked for. */
export interface TaskLimits {
  /** Cores (a fraction of one allowed): cgroup v2 `cpu.max`, systemd's `CPUQuota=`. */
  cpuCores: number | null;
  /** Processes and threads at once: `pids.max`, systemd's `TasksMax=`. */
  pidsMax: number | null;
}

/** The period `cpu.max` is written with (the kernel's default), in microseconds. */
export const CPU_PERIOD_USEC = 100_000;

type Bad = (name: string, expected: string, value: unknown) => Error;

/**
 * Checks a run spec's `cpuCores` and `pidsMax`, naming the field on any
 * problem. A quota below 1% of a core cannot be written (the kernel's least
 * quota is 1 ms a period). Pure.
 *
 * @example
 * ```ts
 * import { checkLimits } from "./limits.ts";
 * const bad = (name: string, expected: string, v: unknown) => new Error(`${name}: ${expected}, got ${String(v)}`);
 * console.log(checkLimits({ cpuCores: 0.5, pidsMax: 64 }, bad)); // { cpuCores: 0.5, pidsMax: 64 }
 * try { checkLimits({ pidsMax: 0 }, bad); } catch (e) { console.log((e as Error).message); } // "pidsMax: an integer from 1 to 4194304, got 0"
 * ```
 */
export function checkLimits(spec: { cpuCores?: number; pidsMax?: number }, bad: Bad): TaskLimits {
  const { cpuCores, pidsMax } = spec;
  if (cpuCores !== undefined && (typeof cpuCores !== "number" || !Number.isFinite(cpuCores) || cpuCores < 0.01 || cpuCores > 4096)) {
    throw bad("cpuCores", "a number of cores from 0.01 to 4096 (e.g. 0.5)", cpuCores);
  }
  if (pidsMax !== undefined && (!Number.isSafeInteger(pidsMax) || pidsMax < 1 || pidsMax > 4_194_304)) {
    throw bad("pidsMax", "an integer from 1 to 4194304", pidsMax);
  }
  return { cpuCores: cpuCores ?? null, pidsMax: pidsMax ?? null };
}

/**
 * `cpu.max`'s text for a number of cores: quota and period in microseconds. Pure.
 *
 * @example
 * ```ts
 * import { cpuMax } from "./limits.ts";
 * console.log(cpuMax(0.5), cpuMax(2)); // "50000 100000" "200000 100000"
 * ```
 */
export function cpuMax(cores: number): string {
  return `${Math.max(1000, Math.round(cores * CPU_PERIOD_USEC))} ${CPU_PERIOD_USEC}`;
}

/**
 * systemd's `CPUQuota=` for a number of cores (percent of one CPU). Pure.
 *
 * @example
 * ```ts
 * import { cpuQuota } from "./limits.ts";
 * console.log(cpuQuota(0.5), cpuQuota(1.25)); // "50%" "125%"
 * ```
 */
export function cpuQuota(cores: number): string {
  return `${Math.max(1, Math.round(cores * 100))}%`;
}

/** What a task's limits did, read at its end: refused forks and CPU throttling. */
export interface LimitEvents {
  /** Forks refused at `pids.max` (`pids.events` max); null without a pids limit or where unreadable. */
  forksRefused: number | null;
  /** Periods in which the task was throttled (`cpu.stat` nr_throttled); null without a CPU limit. */
  cpuThrottledPeriods: number | null;
  /** Time throttled, in microseconds (`cpu.stat` throttled_usec). */
  cpuThrottledUsec: number | null;
}

/**
 * Reads `pids.events` and `cpu.stat` texts (empty when absent) into
 * LimitEvents, for the limits a task had. Pure.
 *
 * @example
 * ```ts
 * import { limitEventsOf } from "./limits.ts";
 * const e = limitEventsOf({ cpuCores: 0.5, pidsMax: 8 }, "max 3\n", "usage_usec 9\nnr_periods 40\nnr_throttled 12\nthrottled_usec 345\n");
 * console.log(e); // { forksRefused: 3, cpuThrottledPeriods: 12, cpuThrottledUsec: 345 }
 * ```
 */
export function limitEventsOf(limits: TaskLimits, pidsEvents: string, cpuStat: string): LimitEvents {
  const field = (text: string, name: string) => {
    const m = new RegExp(`^${name} (\\d+)$`, "m").exec(text);
    return m ? Number(m[1]) : null;
  };
  return {
    forksRefused: limits.pidsMax === null ? null : field(pidsEvents, "max"),
    cpuThrottledPeriods: limits.cpuCores === null ? null : field(cpuStat, "nr_throttled"),
    cpuThrottledUsec: limits.cpuCores === null ? null : field(cpuStat, "throttled_usec"),
  };
}
