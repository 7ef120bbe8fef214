import { isTerminal, type TaskRecord } from "./record/record.ts";

interface Entry {
  /** What the supervisor holds true now: committed, or claimed ahead of its write. */
  current: TaskRecord;
  /** The newest record known to be on disk; null while the first write is under way (never, for a loaded one). */
  committed: TaskRecord | null;
  /** Grows at every change of `current`: a decision made from it is stale once it moved. */
  version: number;
}

/**
 * The records of a storage as this process holds them, by task id. It is the
 * only way anything changes them, and it has two orders on purpose:
 *
 * - **claim, then write** (`claim`): the change is in memory before its write
 *   starts. A task's end is claimed so it cannot end twice while its terminal
 *   record is being written, and a live record (the pid known, `running`) is
 *   claimed so that an end observed meanwhile builds on it. `landed` says the
 *   write came through.
 * - **write, then commit** (`commit`): the change shows only once it is on
 *   disk, so a write that fails never shows: an acknowledgement, the start of
 *   a kill, a record made.
 *
 * A terminal record is never replaced by a live one, whatever the order the
 * writes come back in: terminal states never change.
 *
 * @example
 * ```ts
 * import { TaskTable } from "./task-table.ts";
 * const table = new TaskTable();
 * const base = { id: "t-1", state: "running", createdAt: "2026-12-01T00:00:00.000Z" } as never;
 * table.commit(base);
 * const seen = table.version("t-1");
 * table.claim({ ...(base as object), state: "exited" } as never);
 * console.log(table.get("t-1")?.state, table.version("t-1") > seen); // "exited" true
 * console.log(table.committed("t-1")?.state); // "running": the end's write has not landed yet
 * ```
 */
export class TaskTable {
  private readonly entries = new Map<string, Entry>();
  private next = 1;

  /** Records read from the disk at open: committed as they are. */
  load(records: Iterable<TaskRecord>): void {
    for (const r of records) this.entries.set(r.id, { current: r, committed: r, version: this.next++ });
  }

  get(id: string): TaskRecord | undefined {
    return this.entries.get(id)?.current;
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  /** True once the task's end is claimed: nothing changes its record any more but an acknowledgement. */
  ended(id: string): boolean {
    const entry = this.entries.get(id);
    return entry !== undefined && isTerminal(entry.current.state);
  }

  /** The newest record of `id` known to be on disk. */
  committed(id: string): TaskRecord | null {
    return this.entries.get(id)?.committed ?? null;
  }

  /** A number that changes whenever the record of `id` does (0 for none). */
  version(id: string): number {
    return this.entries.get(id)?.version ?? 0;
  }

  /** Every record held, in no order. */
  values(): IterableIterator<TaskRecord> {
    return (function* (entries) {
      for (const e of entries) yield e.current;
    })(this.entries.values());
  }

  /** Every record held, oldest first. */
  list(): TaskRecord[] {
    return [...this.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Holds `record` ahead of its write (see the class). False, and nothing
   * changes, when the task is terminal already.
   */
  claim(record: TaskRecord): boolean {
    const entry = this.entries.get(record.id);
    if (entry && isTerminal(entry.current.state)) return false;
    if (entry) {
      entry.current = record;
      entry.version = this.next++;
    } else {
      this.entries.set(record.id, { current: record, committed: null, version: this.next++ });
    }
    return true;
  }

  /** The write of a claimed record came through. */
  landed(record: TaskRecord): void {
    const entry = this.entries.get(record.id);
    if (entry && !(entry.committed && isTerminal(entry.committed.state))) entry.committed = record;
  }

  /**
   * `record` is on disk now: it becomes what is held, unless the task ended
   * meanwhile (then the end stands). Returns what is held.
   */
  commit(record: TaskRecord): TaskRecord {
    const entry = this.entries.get(record.id);
    if (!entry) {
      this.entries.set(record.id, { current: record, committed: record, version: this.next++ });
      return record;
    }
    this.landed(record);
    if (isTerminal(entry.current.state) && !isTerminal(record.state)) return entry.current;
    entry.current = record;
    entry.version = this.next++;
    return record;
  }

  /** The task was removed from the storage (retention): it is no longer held. */
  forget(id: string): void {
    this.entries.delete(id);
  }
}
