import { liveGroupMembers, signalGroup } from "../kill/process-group.ts";
import { ownsGroup } from "../kill/owns-group.ts";
import { summarizeOutput } from "../observe/output-tail.ts";
import type { Placement } from "../placement/placement.ts";
import { inspectPid } from "../proc/identity.ts";
import type { PlacementName, TaskRecord } from "../store/record/record.ts";
import { fileSystemFull, fullDiskWords } from "../store/full-disk/space.ts";
import type { TaskStore } from "../store/task-store.ts";
import type { TaskTable } from "../store/task-table.ts";
import { type TaskEnd, terminalRecord } from "./terminal-record.ts";
import { readAttempts } from "../observe/attempts.ts";
import { readLimitEvents } from "../limits/limit-events.ts";
import type { TaskPaths } from "../store/layout.ts";

/** What a task's restart policy and limits came to, for its terminal record; nothing for a task without them. */
function endCounts(record: TaskRecord, paths: TaskPaths): Partial<TaskRecord> {
  const out: Partial<TaskRecord> = {};
  if (record.restart) {
    const attempts = readAttempts(paths.attempts);
    if (attempts) out.restarts = attempts.restarts;
  }
  const limits = readLimitEvents(record, paths);
  if (limits) out.limitEvents = limits;
  return out;
}

/** One task to end, and how. */
export interface Ending {
  record: TaskRecord;
  end: TaskEnd;
  /** Whatever the task left running in its group or cgroup is killed first (replay's `endRemnants`). */
  endRemnants?: boolean;
}

export interface TaskEnderOptions {
  table: TaskTable;
  store: TaskStore;
  placements: Record<PlacementName, Placement>;
  /** Bytes of stdout and of stderr kept in a terminal record's tail. */
  tailBytes: number;
  /** A terminal record is on disk: stop watching it, answer its waiters, deliver it, free its key. */
  ended(done: TaskRecord): void;
  /** A terminal record has just reached the disk, before anyone waiting for it hears (the `ended` step). */
  written?(done: TaskRecord): void;
}

/**
 * The one way a task ends, for live ends, kills, failed spawns and replay
 * alike: each end is claimed exactly once (a task terminal already is left
 * as it is), written (a batch in one `writeMany`, so replay after a long
 * outage flushes twice rather than twice a record), its placement released,
 * then announced.
 */
export class TaskEnder {
  constructor(private readonly o: TaskEnderOptions) {}

  /**
   * Ends each task as its item says, and returns the terminal records made
   * now. `apply: false` (a read-only view) only makes and holds them: nothing
   * is killed, written, released or announced.
   */
  async end(items: readonly Ending[], how: { apply: boolean } = { apply: true }): Promise<TaskRecord[]> {
    const done: TaskRecord[] = [];
    for (const item of items) {
      if (how.apply && item.endRemnants) await this.endRemnants(item.record);
      const claimed = await this.claim(item.record, item.end);
      if (claimed) done.push(claimed);
    }
    if (!how.apply || done.length === 0) return done;
    await (done.length === 1 ? this.o.store.write(done[0]) : this.o.store.writeMany(done));
    for (const d of done) {
      this.o.written?.(d);
      this.o.table.landed(d);
    }
    // The releases start (and register their clean-up with the placement) before the ends are announced, so
    // a close that follows an announcement at once waits for them; the announcements do not wait for them.
    const releasing = done.map((d) => this.o.placements[d.placement].release(d).catch(() => {}));
    for (const d of done) this.o.ended(d);
    await Promise.all(releasing);
    return done;
  }

  /** Ends one task; returns its terminal record, the one made now or the one it had. */
  async endOne(record: TaskRecord, end: TaskEnd, endRemnants = false): Promise<TaskRecord> {
    const [done] = await this.end([{ record, end, endRemnants }]);
    return done ?? this.o.table.get(record.id)!;
  }

  /** Kills what a task whose wrapper is gone left in its group (when the group is still the task's) and its cgroup. */
  private async endRemnants(record: TaskRecord): Promise<void> {
    const placement = this.o.placements[record.placement];
    if (record.pgid !== null && inspectPid(record.pgid) === null) {
      const members = liveGroupMembers(record.pgid);
      if (members?.length && ownsGroup(record, placement, members)) signalGroup(record.pgid, "SIGKILL");
    }
    await placement.killAll(record).catch(() => {});
  }

  /** Makes and holds the terminal record; null when the task is terminal already. On disk only once written. */
  private async claim(record: TaskRecord, end: TaskEnd): Promise<TaskRecord | null> {
    const table = this.o.table;
    if (table.ended(record.id)) return null;
    const root = this.o.store.root;
    const output = await summarizeOutput(this.o.store.paths(record.id), this.o.tailBytes);
    const full = output.lastOutputAt !== null && fileSystemFull(root);
    const paths = this.o.store.paths(record.id);
    const current = table.get(record.id) ?? record;
    const done = { ...terminalRecord(current, end, output, fullDiskWords(full, root), new Date()), ...endCounts(current, paths) };
    return table.claim(done) ? done : null;
  }
}
