import { isTerminal, type TaskRecord } from "../store/record.ts";

/** Which finished tasks a prune may remove, and how many of the newest it leaves. */
export interface PruneRule {
  /** Only tasks that finished more than this many seconds ago. 0: any age. */
  olderThanSeconds: number;
  /** The newest this many removable tasks stay, whatever their age. 0: none stays. */
  keep: number;
}

/**
 * The ids a prune removes, oldest first. Only terminal tasks whose
 * completion was acknowledged are candidates: a completion not yet
 * delivered is never thrown away. Pure: the caller does the removing.
 *
 * @example
 * ```ts
 * import { choosePrune } from "./choose-prune.ts";
 * const t = (id: string, finishedAt: string, acked = true) =>
 *   ({ id, state: "exited", finishedAt, createdAt: finishedAt, acknowledgedAt: acked ? finishedAt : null }) as never;
 * const records = [t("a", "2026-01-01T00:00:00Z"), t("b", "2026-01-02T00:00:00Z"), t("c", "2026-01-03T00:00:00Z", false)];
 * console.log(choosePrune(records, { olderThanSeconds: 0, keep: 1 }, new Date("2026-02-01T00:00:00Z"))); // ["a"]
 * ```
 */
export function choosePrune(records: readonly TaskRecord[], rule: PruneRule, now: Date): string[] {
  const candidates = records
    .filter((r) => isTerminal(r.state) && r.acknowledgedAt !== null)
    .map((r) => ({ id: r.id, at: Date.parse(r.finishedAt ?? r.createdAt) }))
    .sort((a, b) => a.at - b.at || a.id.localeCompare(b.id));
  const cutoff = now.getTime() - rule.olderThanSeconds * 1000;
  const removable = candidates.slice(0, Math.max(0, candidates.length - rule.keep));
  return removable.filter((c) => rule.olderThanSeconds === 0 || c.at <= cutoff).map((c) => c.id);
}
