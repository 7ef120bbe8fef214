/** A restart policy as the record keeps it and outlive-shim carries it out (lib/spawn/shim-settings.ts). */
export interface RestartPolicy {
  /** `on-failure`: after a non-zero end (a signal too); `always`: after any end. */
  when: "on-failure" | "always";
  /** The most restarts; the task ends with the attempt after the last one. */
  max: number;
  /** The first delay; each next one doubles, up to `delayMaxMs`. */
  delayMs: number;
  delayMaxMs: number;
}

/** The run spec's restart fields, as given. */
export interface RestartFields {
  restart?: "on-failure" | "always";
  restartMax?: number;
  restartDelaySeconds?: number;
  restartDelayMaxSeconds?: number;
}

/** The defaults of a policy that names only `restart`. */
export const RESTART_DEFAULTS = { max: 5, delaySeconds: 1, delayMaxSeconds: 30 } as const;

type Bad = (name: string, expected: string, value: unknown) => Error;

/**
 * Checks a run spec's restart fields, naming the field on any problem; null
 * without `restart`. Delays are kept in whole milliseconds, at least 1. Pure.
 *
 * @example
 * ```ts
 * import { checkRestartPolicy } from "./restart-policy.ts";
 * const bad = (name: string, expected: string, v: unknown) => new Error(`${name}: ${expected}, got ${String(v)}`);
 * console.log(checkRestartPolicy({ restart: "on-failure", restartDelaySeconds: 0.2 }, bad)); // { when: "on-failure", max: 5, delayMs: 200, delayMaxMs: 30000 }
 * try { checkRestartPolicy({ restart: "always", restartMax: 0 }, bad); } catch (e) { console.log((e as Error).message); } // "restartMax: an integer from 1 to 10000, got 0"
 * ```
 */
export function checkRestartPolicy(spec: RestartFields, bad: Bad): RestartPolicy | null {
  const { restart, restartMax, restartDelaySeconds, restartDelayMaxSeconds } = spec;
  if (restart === undefined) {
    for (const [name, value] of Object.entries({ restartMax, restartDelaySeconds, restartDelayMaxSeconds })) {
      if (value !== undefined) throw bad(name, 'given with restart ("on-failure" or "always")', value);
    }
    return null;
  }
  if (restart !== "on-failure" && restart !== "always") throw bad("restart", '"on-failure" or "always"', restart);
  const max = restartMax ?? RESTART_DEFAULTS.max;
  if (!Number.isSafeInteger(max) || max < 1 || max > 10_000) throw bad("restartMax", "an integer from 1 to 10000", max);
  const seconds = (name: string, v: unknown) => {
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0.001 || v > 86400) throw bad(name, "a number of seconds from 0.001 to 86400", v);
    return Math.round(v * 1000);
  };
  const delayMs = seconds("restartDelaySeconds", restartDelaySeconds ?? RESTART_DEFAULTS.delaySeconds);
  const delayMaxMs = restartDelayMaxSeconds === undefined
    ? Math.max(delayMs, RESTART_DEFAULTS.delayMaxSeconds * 1000)
    : seconds("restartDelayMaxSeconds", restartDelayMaxSeconds);
  if (delayMaxMs < delayMs) throw bad("restartDelayMaxSeconds", `at least restartDelaySeconds (${delayMs / 1000})`, restartDelayMaxSeconds);
  return { when: restart, max, delayMs, delayMaxMs };
}

/**
 * The delays a policy waits before each restart, in order: the first,
 * doubled each time, held at the cap (what outlive-shim's restart.rs does). Pure.
 *
 * @example
 * ```ts
 * import { restartDelays } from "./restart-policy.ts";
 * console.log(restartDelays({ when: "always", max: 5, delayMs: 200, delayMaxMs: 1000 })); // [200, 400, 800, 1000, 1000]
 * ```
 */
export function restartDelays(policy: RestartPolicy): number[] {
  const out: number[] = [];
  let ms = policy.delayMs;
  for (let i = 0; i < policy.max; i++) {
    out.push(Math.min(ms, policy.delayMaxMs));
    if (ms < policy.delayMaxMs) ms *= 2;
  }
  return out;
}
