import type { TaskStore, UnreadableTask } from "../store/task-store.ts";
import type { TaskTable } from "../store/task-table.ts";
import type { PruneRule } from "./choose-prune.ts";
import { normalizePruneRule } from "./options.ts";
import { CLOSE_PURGE_BUDGET_MS, Purger } from "./purger.ts";
import { prune, type PruneResult, pruneWhenOver, removeByName, retainAtOpen, type RetentionHost } from "./retention.ts";

export interface RetainerOptions {
  store: TaskStore;
  table: TaskTable;
  /** The `retention` rule (false: none). */
  rule: PruneRule | false;
  /** Drops a removed task from the completion queue. */
  forget(id: string): void;
  /** Incarnations that must stay whatever the records say (this one). */
  liveIncarnations(): string[];
  unreadable(): readonly UnreadableTask[];
  log(line: string): void;
}

/**
 * A supervisor's retention: removal by name, prunes asked for, the rule at
 * open and, as acknowledgements come, again once a batch is over it; the
 * deleting itself goes on in the background and is bounded at close.
 */
export class Retainer {
  private readonly purger: Purger;
  private readonly host: RetentionHost;
  /** A prune by the rule under way, started by an acknowledgement. */
  private pruning: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly o: RetainerOptions) {
    this.purger = new Purger(o.store.root, o.log);
    this.host = {
      store: o.store,
      records: o.table,
      forget: (id) => o.forget(id),
      liveIncarnations: () => o.liveIncarnations(),
      unreadable: () => o.unreadable(),
      purger: this.purger,
    };
  }

  /** Prunes by the rule at open. Housekeeping: a storage it cannot tidy is still opened, and says why once. */
  atOpen(): Promise<PruneResult> {
    return retainAtOpen(this.host, this.o.rule).catch((error) => {
      this.o.log(`pruning at open by the retention rule failed: ${(error as Error).message}`);
      return { removed: [], incarnationsRemoved: 0, keptUnacknowledged: 0 };
    });
  }

  remove(names: readonly string[]): Promise<string[]> {
    return removeByName(this.host, names);
  }

  prune(rule: { olderThanSeconds?: number; keep?: number; unacknowledged?: boolean }): Promise<PruneResult> {
    return prune(this.host, normalizePruneRule(rule, "prune", { olderThanSeconds: 0, keep: 0 }), "now");
  }

  /** A supervisor that lives for days prunes by its rule as acks come, not only at open. */
  acknowledged(): void {
    const rule = this.o.rule;
    if (!rule || this.pruning || this.closed) return;
    this.pruning = pruneWhenOver(this.host, rule)
      .catch((error) => this.o.log(`pruning by the retention rule failed: ${(error as Error).message}`))
      .finally(() => (this.pruning = null));
  }

  /** Waits for a prune under way, then lets the deleting go on for a bounded time. */
  async close(): Promise<void> {
    this.closed = true;
    await this.pruning;
    await this.purger.stop(CLOSE_PURGE_BUDGET_MS);
  }
}
