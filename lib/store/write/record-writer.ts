import { existsSync, rmdirSync, unlinkSync } from "node:fs";
import { mkdir, unlink } from "node:fs/promises";
import { OutliveError } from "../../errors.ts";
import { writeFilesAtomic } from "./atomic-batch.ts";
import { syncPath, writeFileAtomic } from "./atomic-write.ts";
import { legacyReservePaths, storagePaths, type TaskPaths } from "../layout.ts";
import { isNoSpace, writeIntoReserve } from "../full-disk/record-reserve.ts";
import { type ReserveKind, type ReservePool, reserveSizes } from "../full-disk/reserve-pool.ts";
import { isTerminal, type TaskRecord } from "../record/record.ts";
import { storageError } from "../storage/storage-error.ts";

/**
 * The writing side of a writable storage: makes task directories, replaces
 * records atomically and in order, and on a full disk writes them into the
 * reserves. It knows which tasks are live on disk (made here, or loaded
 * live) and so how many shares of the reserve pool they hold. Used through
 * TaskStore, which refuses writes to a read-only storage before they get here.
 */
export class RecordWriter {
  /**
   * The tasks not yet terminal on disk, as this store knows them: made here
   * or loaded live, each with its share of the pool; or `legacy`: loaded
   * with the per-task reserves an older outlive made in its directory, which
   * it uses instead and which go at its end.
   */
  private readonly live = new Map<string, "pool" | "legacy">();
  private readonly pending = new Map<string, Promise<void>>();

  constructor(
    private readonly root: string,
    private readonly reserves: ReservePool,
    private readonly paths: (id: string) => TaskPaths,
  ) {}

  /**
   * Makes sure the reserves hold this task's share too (its terminal record
   * may need `reserveBytes` beyond this first record's size; see
   * ReservePool), makes the task's directory (refusing an id that exists)
   * and writes its first record. On any failure nothing of the task is left.
   */
  async create(record: TaskRecord, options: { reserveBytes?: number } = {}): Promise<TaskPaths> {
    const p = this.paths(record.id);
    const data = serialize(record);
    try {
      this.reserves.ensure(this.poolShares() + 1, reserveSizes(Buffer.byteLength(data), options.reserveBytes));
    } catch (error) {
      throw storageError(this.reserves.dir, error);
    }
    try {
      await mkdir(p.dir, { mode: 0o700 });
    } catch (error) {
      if ((error as { code?: string }).code === "EEXIST") {
        throw new OutliveError("E_BAD_ID", `A task with id ${JSON.stringify(record.id)} already exists in ${this.root}`);
      }
      throw storageError(p.dir, error);
    }
    try {
      await mkdir(p.io, { mode: 0o700 }).catch((e) => {
        throw storageError(p.io, e);
      });
      this.live.set(record.id, "pool");
      await this.write(record, { first: true });
    } catch (error) {
      this.live.delete(record.id);
      removeMade(p);
      throw error;
    }
    return p;
  }

  /**
   * Replaces the record atomically, after any earlier write of the same task
   * still under way, so overlapping writes never leave an older state on disk.
   */
  write(record: TaskRecord, how: { first?: boolean } = {}): Promise<void> {
    const before = this.pending.get(record.id) ?? Promise.resolve();
    const next = before.catch(() => {}).then(() => this.writeNow(record, how.first === true));
    this.pending.set(record.id, next);
    void next.catch(() => {}).finally(() => {
      if (this.pending.get(record.id) === next) this.pending.delete(record.id);
    });
    return next;
  }

  /**
   * Replaces many records at once with the same guarantee as `write` (see
   * writeFilesAtomic), after any write of those tasks still under way.
   */
  writeMany(records: readonly TaskRecord[]): Promise<void> {
    const before = Promise.allSettled(records.map((r) => this.pending.get(r.id)));
    const next = before.then(async () => {
      try {
        await writeFilesAtomic(records.map((r) => ({ path: this.paths(r.id).record, data: serialize(r) })));
      } catch (error) {
        if (!isNoSpace(error)) throw storageError(storagePaths(this.root).tasks, error);
        // A full disk: each record goes on its own, into the space reserved for it.
        let first: unknown = null;
        for (const r of records) await this.writeNow(r).catch((e) => (first ??= e));
        if (first) throw first;
        return;
      }
      for (const r of records) if (isTerminal(r.state)) await this.ended(r.id);
    });
    for (const r of records) this.pending.set(r.id, next);
    void next.catch(() => {}).finally(() => {
      for (const r of records) if (this.pending.get(r.id) === next) this.pending.delete(r.id);
    });
    return next;
  }

  /** Resolves once every write under way has landed (or failed). */
  async flush(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending.values()]);
  }

  /**
   * A task loaded live from disk: its end will be written here. An older
   * outlive may have made its reserves in its directory; it uses those.
   */
  adoptLive(id: string): void {
    if (this.live.has(id)) return;
    this.live.set(id, existsSync(legacyReservePaths(this.paths(id).dir).terminal[0]) ? "legacy" : "pool");
  }

  private async writeNow(record: TaskRecord, first = false): Promise<void> {
    const p = this.paths(record.id);
    const data = serialize(record);
    // An end (and its acknowledgement) is made to survive a host crash: an end already delivered to waiters
    // must not be taken back. So is a task's first record, with its directory: the live states after it are
    // answered by the boot id ("the host rebooted") when lost, but only if a record is there to answer; without
    // it a power cut left no directory (a task whose run returned, unknown) or an empty record.json (quarantined).
    // See docs/design/durability.md, "What each write protects".
    const durable = first || isTerminal(record.state);
    try {
      await writeFileAtomic(p.record, data, { durable });
    } catch (error) {
      if (!isNoSpace(error)) throw storageError(p.record, error);
      // A task's output may fill the disk at any moment after it starts. Ends have reserves of their own
      // kind, so the live writes (running, killing) can never use up the space of an end.
      const written = await this.writeIntoReserves(record, data, durable).catch((reserveError) => {
        throw storageError(p.record, reserveError);
      });
      if (!written) throw storageError(p.record, error);
    }
    // The task's directory is new: its entry in tasks/ must be on the disk too.
    if (first) await syncTasksDir(this.root);
    if (isTerminal(record.state)) await this.ended(record.id);
  }

  /**
   * Writes a record on a full disk: into a reserve of the pool, else (a task
   * an older outlive started) into one in its own directory. False when no
   * reserve is left.
   */
  private async writeIntoReserves(record: TaskRecord, data: string, durable: boolean): Promise<boolean> {
    const p = this.paths(record.id);
    const kind: ReserveKind = isTerminal(record.state) ? "terminal" : "live";
    const bytes = Buffer.byteLength(data);
    for (;;) {
      const reserve = this.reserves.take(kind, bytes);
      if (reserve === null) break;
      try {
        await writeIntoReserve(reserve, p.record, data, p.dir, durable);
        return true;
      } catch (error) {
        // Cut short when it was made (then it was found too small), or gone: the next one is tried.
        if ((error as { code?: string }).code !== "ENOENT" && !isNoSpace(error)) throw error;
      }
    }
    for (const reserve of legacyReservePaths(p.dir)[kind]) {
      try {
        await writeIntoReserve(reserve, p.record, data, p.dir, durable);
        return true;
      } catch (error) {
        if ((error as { code?: string }).code !== "ENOENT") throw error;
      }
    }
    return false;
  }

  /**
   * Live tasks whose reserves are in the pool. The pool is topped up only
   * when a task is made: what an earlier life made is still there for the
   * tasks it adopted, and the records replay finishes at open would
   * otherwise be counted while they are still live on disk.
   */
  private poolShares(): number {
    let n = 0;
    for (const kind of this.live.values()) if (kind === "pool") n++;
    return n;
  }

  /** A task's end is on disk: its share of the reserves stays in the pool for the next run. */
  private async ended(id: string): Promise<void> {
    const was = this.live.get(id);
    this.live.delete(id);
    if (was === "legacy") {
      const r = legacyReservePaths(this.paths(id).dir);
      for (const path of [...r.terminal, ...r.live]) await unlink(path).catch(() => {});
    }
  }
}

/** fsync of `tasks/`: a new task directory's entry in it survives a host crash. */
async function syncTasksDir(root: string): Promise<void> {
  const dir = storagePaths(root).tasks;
  await syncPath(dir).catch((error) => {
    throw storageError(dir, error);
  });
}

function serialize(record: TaskRecord): string {
  return `${JSON.stringify(record, null, 2)}\n`;
}

/**
 * Takes back what `create` made, name by name: unlink and rmdir need no file
 * descriptor, where a recursive remove (which opens the directory) fails
 * for want of one and would leave half a task directory behind.
 */
function removeMade(p: TaskPaths): void {
  try {
    unlinkSync(p.record);
  } catch {
    // never made
  }
  for (const dir of [p.io, p.dir]) {
    try {
      rmdirSync(dir);
    } catch {
      // never made, or holds what a temp write left (then it says why create failed)
    }
  }
}
