import { describeValue, OutliveError } from "../errors.ts";
import type { PruneRule } from "./choose-prune.ts";

/**
 * What a supervisor prunes at open unless told otherwise: every finished,
 * acknowledged task (or one a CLI started, which nobody acknowledges) but
 * the newest 1000. That bounds a long-lived host's
 * storage by count (and, with `maxOutputBytes`, by bytes) however many tasks
 * it has seen, and keeps open fast (see bench/retention-open.ts).
 *
 * @example
 * ```ts
 * import { DEFAULT_RETENTION } from "./options.ts";
 * console.log(DEFAULT_RETENTION); // { olderThanSeconds: 0, keep: 1000 }
 * ```
 */
export const DEFAULT_RETENTION: PruneRule = Object.freeze({ olderThanSeconds: 0, keep: 1000 });

/** A prune rule from what a caller gave, each field checked and named. */
export function normalizePruneRule(value: unknown, name: string, defaults: PruneRule): PruneRule {
  const bad = (field: string, expected: string, v: unknown) =>
    new OutliveError("E_BAD_OPTION", `Expected the \`${field}\` option to be ${expected}, got ${describeValue(v)}`);
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw bad(name, "an object { olderThanSeconds?, keep?, unacknowledged? }", value);
  const o = value as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (key !== "olderThanSeconds" && key !== "keep" && key !== "unacknowledged") throw bad(`${name}.${key}`, "absent (only olderThanSeconds, keep and unacknowledged exist)", o[key]);
  }
  const older = o.olderThanSeconds ?? defaults.olderThanSeconds;
  if (typeof older !== "number" || !Number.isFinite(older) || older < 0) throw bad(`${name}.olderThanSeconds`, "a number of seconds >= 0", older);
  const keep = o.keep ?? defaults.keep;
  if (!Number.isSafeInteger(keep) || (keep as number) < 0) throw bad(`${name}.keep`, "an integer >= 0", keep);
  const unacknowledged = o.unacknowledged ?? defaults.unacknowledged ?? false;
  if (typeof unacknowledged !== "boolean") throw bad(`${name}.unacknowledged`, "a boolean", unacknowledged);
  return { olderThanSeconds: older, keep: keep as number, ...(unacknowledged ? { unacknowledged } : {}) };
}

/** The `retention` option: `false` turns pruning at open off. */
export function normalizeRetention(value: unknown): PruneRule | false {
  if (value === false) return false;
  if (value === undefined) return DEFAULT_RETENTION;
  return normalizePruneRule(value, "retention", DEFAULT_RETENTION);
}
