import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readFileSync, rmdirSync, unlinkSync } from "node:fs";
import { lstat, mkdir, readdir, rename, stat, unlink } from "node:fs/promises";
import { OutliveError } from "../errors.ts";
import { forEachBounded } from "../pool/for-each-bounded.ts";
import { writeFilesAtomic } from "./atomic-batch.ts";
import { writeFileAtomic } from "./atomic-write.ts";
import { taskIoProblem } from "./io-check.ts";
import { parseRecord, type RecordProblem } from "./parse-record.ts";
import { isNoSpace, writeIntoReserve } from "./record-reserve.ts";
import { ReservePool, type ReserveKind } from "./reserve-pool.ts";
import { withBallast } from "./ballast.ts";
import { isTerminal, type TaskRecord } from "./record.ts";
import { isQuarantineNote, legacyReservePaths, quarantineName, quarantineNotePath, quarantinePath, storagePaths, taskPaths, type TaskPaths } from "./layout.ts";
import { TASK_ID_PATTERN } from "./task-id.ts";

/** A task directory that could not be read as a record, and why. */
export interface UnreadableTask {
  id: string;
  problem: RecordProblem;
  /** Where it was moved (corrupt records); null when left in place (newer schema). */
  quarantinedTo: string | null;
}

export type ReadResult = { ok: true; record: TaskRecord } | { ok: false; id: string; problem: RecordProblem };

/** Records larger than this are not records outlive wrote. */
const MAX_RECORD_BYTES = 1 << 20;

/**
 * The storage: `<root>/tasks/<id>/record.json` and `io/`, plus quarantine and
 * incarnations. Directories 0700, files 0600; records are replaced atomically.
 *
 * @example
 * ```ts
 * import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { TaskStore } from "./task-store.ts";
 * const root = mkdtempSync(join(tmpdir(), "outlive-store-"));
 * const store = await TaskStore.open(root);
 * mkdirSync(store.paths("t-bad").dir);
 * writeFileSync(store.paths("t-bad").record, "{ half a rec");
 * const { records, unreadable } = await store.loadAll();
 * console.log(records.length, unreadable[0].problem.kind, await store.quarantined()); // 0 "corrupt" ["t-bad.<time>"]
 * rmSync(root, { recursive: true });
 * ```
 */
export class TaskStore {
  readonly root: string;
  /** Opened only to read: nothing is made, moved or written. */
  readonly readOnly: boolean;

  /** Space for records on a full disk, shared by the live tasks (null when read-only). */
  private readonly reserves: ReservePool | null;
  /**
   * The tasks not yet terminal on disk, as this store knows them: made here
   * or loaded live, each with its share of the pool; or `legacy`: loaded
   * with the per-task reserves an older outlive made in its directory, which
   * it uses instead and which go at its end.
   */
  private readonly live = new Map<string, "pool" | "legacy">();

  private constructor(root: string, readOnly: boolean, reserves: ReservePool | null) {
    this.root = root;
    this.readOnly = readOnly;
    this.reserves = reserves;
  }

  /**
   * Creates the storage root if missing and refuses one that others could
   * tamper with. `readOnly`: for views of a full or read-only storage;
   * nothing is created or checked by writing, and writes are refused.
   */
  static async open(root: string, options: { readOnly?: boolean; ballastBytes?: number } = {}): Promise<TaskStore> {
    if (options.readOnly) return new TaskStore(root, true, null);
    try {
      await mkdir(root, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw new OutliveError("E_STORAGE", `Cannot create the storage directory ${root}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    // Checked before anything is made inside it: a refused root is left exactly as it was.
    const info = await stat(root);
    if (!info.isDirectory()) throw new OutliveError("E_STORAGE", `The storage path ${root} is not a directory`);
    const uid = process.getuid?.();
    if (uid !== undefined && info.uid !== uid) {
      throw new OutliveError(
        "E_STORAGE",
        `The storage directory ${root} belongs to uid ${info.uid}, not to this user (uid ${uid}); refusing to use it`,
      );
    }
    if (info.mode & 0o022) {
      throw new OutliveError(
        "E_STORAGE",
        `The storage directory ${root} is writable by others (mode ${(info.mode & 0o777).toString(8)}); run chmod 700 on it`,
      );
    }
    const layout = storagePaths(root);
    let reserves: ReservePool;
    try {
      for (const dir of [layout.tasks, layout.quarantine, layout.incarnations]) {
        await mkdir(dir, { recursive: true, mode: 0o700 });
      }
    } catch (error) {
      throw new OutliveError("E_STORAGE", `Cannot create the storage directory ${root}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    try {
      reserves = ReservePool.open(root);
    } catch (error) {
      throw new OutliveError("E_STORAGE", `Cannot read the storage's reserves in ${layout.reserves}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const store = new TaskStore(root, false, reserves);
    await withBallast(root, options.ballastBytes ?? 0, () => store.checkWritable());
    return store;
  }

  paths(id: string): TaskPaths {
    return taskPaths(this.root, id);
  }

  /**
   * Makes sure the reserves hold this task's share too (its terminal record
   * may need `reserveBytes` beyond this first record's size; see
   * ReservePool), makes the task's directory (refusing an id that exists)
   * and writes its first record. On any failure nothing of the task is left.
   */
  async create(record: TaskRecord, options: { reserveBytes?: number } = {}): Promise<TaskPaths> {
    this.assertWritable();
    const p = this.paths(record.id);
    const data = `${JSON.stringify(record, null, 2)}\n`;
    try {
      this.reserves!.ensure(this.poolShares() + 1, reserveSizes(Buffer.byteLength(data), options.reserveBytes ?? DEFAULT_TERMINAL_EXTRA_BYTES));
    } catch (error) {
      throw this.storageError(this.reserves!.dir, error);
    }
    try {
      await mkdir(p.dir, { mode: 0o700 });
    } catch (error) {
      if ((error as { code?: string }).code === "EEXIST") {
        throw new OutliveError("E_BAD_ID", `A task with id ${JSON.stringify(record.id)} already exists in ${this.root}`);
      }
      throw this.storageError(p.dir, error);
    }
    try {
      await mkdir(p.io, { mode: 0o700 }).catch((e) => {
        throw this.storageError(p.io, e);
      });
      this.live.set(record.id, "pool");
      await this.write(record);
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
  write(record: TaskRecord): Promise<void> {
    try {
      this.assertWritable();
    } catch (error) {
      return Promise.reject(error);
    }
    const before = this.pending.get(record.id) ?? Promise.resolve();
    const next = before.catch(() => {}).then(() => this.writeNow(record));
    this.pending.set(record.id, next);
    void next.catch(() => {}).finally(() => {
      if (this.pending.get(record.id) === next) this.pending.delete(record.id);
    });
    return next;
  }

  private readonly pending = new Map<string, Promise<void>>();

  /**
   * Replaces many records at once with the same guarantee as `write` (see
   * writeFilesAtomic), after any write of those tasks still under way.
   */
  writeMany(records: readonly TaskRecord[]): Promise<void> {
    try {
      this.assertWritable();
    } catch (error) {
      return Promise.reject(error);
    }
    const before = Promise.allSettled(records.map((r) => this.pending.get(r.id)));
    const next = before.then(async () => {
      try {
        await writeFilesAtomic(records.map((r) => ({ path: this.paths(r.id).record, data: `${JSON.stringify(r, null, 2)}\n` })));
      } catch (error) {
        if (!isNoSpace(error)) throw this.storageError(storagePaths(this.root).tasks, error);
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

  private async writeNow(record: TaskRecord): Promise<void> {
    const p = this.paths(record.id);
    const data = `${JSON.stringify(record, null, 2)}\n`;
    // Only an end (and its acknowledgement) is made to survive a host crash: the task dies with the host,
    // so a live state lost with it is answered by the boot id ("the host rebooted"), while an end already
    // delivered to waiters must not be taken back. See the README's "What each write protects".
    const durable = isTerminal(record.state);
    try {
      await writeFileAtomic(p.record, data, { durable });
    } catch (error) {
      if (!isNoSpace(error)) throw this.storageError(p.record, error);
      // A task's output may fill the disk at any moment after it starts. Ends have reserves of their own
      // kind, so the live writes (running, killing) can never use up the space of an end.
      const written = await this.writeIntoReserves(record, data, durable).catch((reserveError) => {
        throw this.storageError(p.record, reserveError);
      });
      if (!written) throw this.storageError(p.record, error);
    }
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
      const reserve = this.reserves!.take(kind, bytes);
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
    if (was === "legacy") await dropLegacyReserves(this.paths(id));
  }

  private assertWritable(): void {
    if (this.readOnly) throw new OutliveError("E_STORAGE", `The storage ${this.root} was opened read-only; nothing is written to it`);
  }

  /**
   * Reads one record without following symlinks; says what is wrong rather
   * than throwing. Synchronous calls underneath: a record is a small local
   * file, and replay reads thousands of them, where the thread-pool round
   * trips of async calls cost ten times the read.
   */
  async read(id: string): Promise<ReadResult> {
    return this.readNow(id);
  }

  private readNow(id: string): ReadResult {
    const p = this.paths(id);
    const fail = (reason: string): ReadResult => ({ ok: false, id, problem: { kind: "corrupt", reason } });
    if (!TASK_ID_PATTERN.test(id)) return fail("the directory name is not a valid task id");
    let dirInfo;
    try {
      dirInfo = lstatSync(p.dir);
    } catch (error) {
      if ((error as { code?: string }).code === "ENOENT") {
        throw new OutliveError("E_NO_TASK", `No task ${JSON.stringify(id)} in ${this.root}`);
      }
      throw this.storageError(p.dir, error);
    }
    if (dirInfo.isSymbolicLink()) return fail("the task directory is a symlink (not followed)");
    if (!dirInfo.isDirectory()) return fail("the task entry is not a directory");
    let text: string;
    let fd: number;
    try {
      // O_NONBLOCK: a FIFO put in its place would block an ordinary open for ever.
      fd = openSync(p.record, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === "ELOOP") return fail("record.json is a symlink (not followed)");
      if (code === "ENOENT") return fail("record.json is missing");
      // Out of descriptors says nothing about the record: it must not be quarantined for it.
      if (code === "EMFILE" || code === "ENFILE") {
        throw new OutliveError("E_STORAGE", `Cannot read the storage at ${p.record}: ${(error as Error).message}`, { cause: error });
      }
      return fail(`record.json cannot be read: ${(error as Error).message}`);
    }
    try {
      const info = fstatSync(fd);
      if (!info.isFile()) return fail("record.json is not a regular file");
      if (info.size > MAX_RECORD_BYTES) return fail(`record.json is ${info.size} bytes, larger than any record`);
      text = readFileSync(fd, "utf8");
    } catch (error) {
      return fail(`record.json cannot be read: ${(error as Error).message}`);
    } finally {
      closeSync(fd);
    }
    const parsed = parseRecord(text, id);
    if (!parsed.ok) return { ok: false, id, problem: parsed.problem };
    // Only a live task's io/ is read by path (replay's evidence, observation); a finished one's output is
    // read with O_NOFOLLOW when asked for. Checking only those keeps replay of a long history cheap.
    if (!isTerminal(parsed.record.state)) {
      const ioProblem = taskIoProblem(p);
      if (ioProblem) return fail(ioProblem);
    }
    return parsed;
  }

  /** Ids of every task directory (including unreadable ones). */
  async ids(): Promise<string[]> {
    try {
      return (await readdir(storagePaths(this.root).tasks)).filter((name) => !name.startsWith("."));
    } catch (error) {
      // A read-only view of a storage never made holds no tasks; a writable open made `tasks/` already.
      if (this.readOnly && (error as { code?: string }).code === "ENOENT") return [];
      throw error;
    }
  }

  /**
   * Reads every record. Corrupt ones are moved to `quarantine/` with the
   * reason beside them (unless `quarantine: false`, for read-only views);
   * newer-schema ones are left untouched. Either way they are reported, and
   * the rest load normally.
   */
  async loadAll(options: { quarantine?: boolean; concurrency?: number } = {}): Promise<{ records: TaskRecord[]; unreadable: UnreadableTask[] }> {
    const concurrency = options.concurrency ?? 64;
    const ids = await this.ids();
    const records: TaskRecord[] = [];
    const unreadable: UnreadableTask[] = [];
    await forEachBounded(ids, concurrency, async (id) => {
      let result: ReadResult;
      try {
        result = await this.read(id);
      } catch (error) {
        if ((error as OutliveError).code === "E_NO_TASK") return; // removed while we listed
        throw error;
      }
      if (result.ok) {
        records.push(result.record);
        if (!isTerminal(result.record.state) && !this.readOnly && !this.live.has(id)) {
          this.live.set(id, existsSync(legacyReservePaths(this.paths(id).dir).terminal[0]) ? "legacy" : "pool");
        }
      }
      else {
        const quarantinedTo = result.problem.kind === "corrupt" && options.quarantine !== false && !this.readOnly
          ? await this.quarantine(id, result.problem.reason)
          : null;
        unreadable.push({ id, problem: result.problem, quarantinedTo });
      }
    });
    records.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    return { records, unreadable };
  }

  /** Moves a task directory aside (never deletes it) with the reason in `quarantine-reason.txt`. */
  async quarantine(id: string, reason: string): Promise<string> {
    const target = quarantinePath(this.root, quarantineName(id, new Date()));
    await rename(this.paths(id).dir, target);
    const entry = await lstat(target);
    await writeFileAtomic(quarantineNotePath(target, entry.isDirectory() && !entry.isSymbolicLink()), `${reason}\n`);
    return target;
  }

  /** Quarantined entries (name, reason), for `ps`. */
  async quarantined(): Promise<string[]> {
    return (await readdir(storagePaths(this.root).quarantine)).filter((n) => !isQuarantineNote(n));
  }

  private async checkWritable(): Promise<void> {
    const { tasks, writeCheck } = storagePaths(this.root);
    try {
      // A probe of whether the storage takes writes: nothing reads it back, so nothing is flushed.
      await writeFileAtomic(writeCheck, "ok\n", { durable: false });
    } catch (error) {
      throw this.storageError(tasks, error);
    }
  }

  private storageError(path: string, error: unknown): OutliveError {
    if (error instanceof OutliveError) return error;
    return new OutliveError("E_STORAGE", `Cannot write the storage at ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** What a terminal reserve holds beyond the first record's size when the caller does not say: the output tail, the reason. */
const DEFAULT_TERMINAL_EXTRA_BYTES = 32_768;

/** What a live write's reserve holds beyond the first record's size: a kill reason, a found location. */
const LIVE_RESERVE_EXTRA_BYTES = 4096;

/**
 * The reserve sizes a task needs, rounded up to whole 4 KiB blocks (so most
 * tasks need the same sizes, and any one's reserve fits the next).
 */
function reserveSizes(firstRecordBytes: number, terminalExtraBytes: number): Record<ReserveKind, number> {
  const blocks = (n: number) => Math.ceil(n / 4096) * 4096;
  return { terminal: blocks(firstRecordBytes + terminalExtraBytes), live: blocks(firstRecordBytes + LIVE_RESERVE_EXTRA_BYTES) };
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

async function dropLegacyReserves(p: TaskPaths): Promise<void> {
  const r = legacyReservePaths(p.dir);
  for (const path of [...r.terminal, ...r.live]) await unlink(path).catch(() => {});
}
