import { isTerminal, type TaskRecord } from "../store/record/record.ts";
import { heldByFloor } from "./keep-floor.ts";

/** Which finished tasks a prune may remove, and how many of the newest it leaves. */
export interface PruneRule {
  /** Only tasks that finished more than this many seconds ago. 0: any age. */
  olderThanSeconds: number;
  /** The newest this many removable tasks stay, whatever their age. 0: none stays. */
  keep: number;
  /**
   * Also tasks whose completion was never acknowledged, a holder's
   * undelivered ones among them (default false: only acknowledged ones and
   * those a CLI started, which nobody acknowledges).
   */
  unacknowledged?: boolean;
}

/**
 * Whether a finished task may be pruned at all: its completion was
 * acknowledged, or nobody will ever take it (a task the CLI started, origin
 * "cli"), or the rule says unacknowledged ones go too.
 */
export function removable(r: TaskRecord, rule: Pick<PruneRule, "unacknowledged">): boolean {
  return isTerminal(r.state) && (r.acknowledgedAt !== null || r.origin === "cli" || rule.unacknowledged === true);
}

/**
 * The ids a prune removes, oldest first. Only terminal tasks whose
 * completion was acknowledged, or that a CLI started, are candidates: a
 * completion an owner has not yet taken is never thrown away, unless the
 * rule says `unacknowledged`. A task whose `keepAfterEndMs` has not passed
 * since its end stays whatever the rule says (it still counts among the
 * newest `keep`). Pure: the caller does the removing.
 *
 * @example
 * ```ts
 * import { choosePrune } from "./choose-prune.ts";
 * const t = (id: string, finishedAt: string, acked = true) =>
 *   ({ id, state: "exited", finishedAt, createdAt: finishedAt, acknowledgedAt: acked ? finishedAt : null }) as never;
 * const records = [t("a", "2026-01-01T00:00:00Z"), t("b", "2026-01-02T00:00:00Z"), t("c", "2026-01-03T00:00:00Z", false)];
 * console.log(choosePrune(records, { olderThanSeconds: 0, keep: 1 }, new Date("2026-02-01T00:00:00Z"))); // ["a"]
 * console.log(choosePrune(records, { olderThanSeconds: 0, keep: 0, unacknowledged: true }, new Date("2026-02-01T00:00:00Z"))); // ["a", "b", "c"]
 * ```
 */
export function choosePrune(records: readonly TaskRecord[], rule: PruneRule, now: Date): string[] {
  const candidates = records
    .filter((r) => removable(r, rule))
    .map((r) => ({ id: r.id, at: Date.parse(r.finishedAt ?? r.createdAt), record: r }))
    .sort((a, b) => a.at - b.at || a.id.localeCompare(b.id));
  const cutoff = now.getTime() - rule.olderThanSeconds * 1000;
  const beyondKeep = candidates.slice(0, Math.max(0, candidates.length - rule.keep));
  return beyondKeep.filter((c) => (rule.olderThanSeconds === 0 || c.at <= cutoff) && !heldByFloor(c.record, now)).map((c) => c.id);
}

/**
 * How many finished tasks a prune by `rule` leaves only because their
 * completion waits for an ack (what `unacknowledged: true` would make
 * candidates too). Pure.
 *
 * @example
 * ```ts
 * import { heldForAck } from "./choose-prune.ts";
 * const t = (id: string, acked: boolean, origin?: "cli") => ({ id, state: "exited", acknowledgedAt: acked ? "2026-01-01T00:00:00Z" : null, origin }) as never;
 * console.log(heldForAck([t("a", true), t("b", false), t("c", false, "cli")], { olderThanSeconds: 0, keep: 0 })); // 1
 * ```
 */
export function heldForAck(records: Iterable<TaskRecord>, rule: PruneRule): number {
  if (rule.unacknowledged) return 0;
  let n = 0;
  for (const r of records) if (isTerminal(r.state) && !removable(r, rule)) n++;
  return n;
}
