import { readdir } from "node:fs/promises";
import { OutliveError } from "../errors.ts";
import { forEachBounded } from "../pool/for-each-bounded.ts";
import { storagePaths, taskPaths, type TaskPaths } from "./layout.ts";
import { prepareStorage } from "./storage/open-storage.ts";
import type { RecordProblem } from "./record/parse-record.ts";
import { listQuarantined, quarantineTask } from "./storage/quarantine.ts";
import { entryKindOfDirent, RECORD_MISSING, type ReadResult, readTaskRecord, type TaskEntryKind } from "./record/read-record.ts";
import { removeStartCutShort } from "./record/start-cut-short.ts";
import { RecordWriter } from "./write/record-writer.ts";
import type { ReservePool } from "./full-disk/reserve-pool.ts";
import { isTerminal, type TaskRecord } from "./record/record.ts";

export type { ReadResult };

/** A task directory that could not be read as a record, and why. */
export interface UnreadableTask {
  id: string;
  problem: RecordProblem;
  /** Where it was moved (corrupt records); null when left in place (newer schema). */
  quarantinedTo: string | null;
}

/**
 * The storage: `<root>/tasks/<id>/record.json` and `io/`, plus quarantine and
 * incarnations (every path: layout.ts). Directories 0700, files 0600; records
 * are replaced atomically.
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

  /** Null when read-only. */
  private readonly writer: RecordWriter | null;

  private constructor(root: string, reserves: ReservePool | null) {
    this.root = root;
    this.readOnly = reserves === null;
    this.writer = reserves && new RecordWriter(root, reserves, (id) => this.paths(id));
  }

  /**
   * Creates the storage root if missing and refuses one that others could
   * tamper with (see prepareStorage). `readOnly`: for views of a full or
   * read-only storage; nothing is created or checked by writing, and writes
   * are refused.
   */
  static async open(root: string, options: { readOnly?: boolean; ballastBytes?: number } = {}): Promise<TaskStore> {
    if (options.readOnly) return new TaskStore(root, null);
    return new TaskStore(root, await prepareStorage(root, options.ballastBytes ?? 0));
  }

  paths(id: string): TaskPaths {
    return taskPaths(this.root, id);
  }

  /** See RecordWriter.create: the task's directory and first record, with its share of the reserves. */
  async create(record: TaskRecord, options: { reserveBytes?: number } = {}): Promise<TaskPaths> {
    return this.writable().create(record, options);
  }

  /**
   * Replaces the record atomically, after any earlier write of the same task
   * still under way, so overlapping writes never leave an older state on disk.
   */
  write(record: TaskRecord): Promise<void> {
    try {
      return this.writable().write(record);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Replaces many records at once with the same guarantee as `write` (see
   * writeFilesAtomic), after any write of those tasks still under way.
   */
  writeMany(records: readonly TaskRecord[]): Promise<void> {
    try {
      return this.writable().writeMany(records);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Resolves once every write under way has landed (or failed). */
  async flush(): Promise<void> {
    await this.writer?.flush();
  }

  private writable(): RecordWriter {
    if (!this.writer) throw new OutliveError("E_STORAGE", `The storage ${this.root} was opened read-only; nothing is written to it`);
    return this.writer;
  }

  /** Reads one record; says what is wrong rather than throwing (see readTaskRecord). */
  async read(id: string, entry?: TaskEntryKind): Promise<ReadResult> {
    return readTaskRecord(this.root, id, this.paths(id), entry);
  }

  /** Ids of every task directory (including unreadable ones). */
  async ids(): Promise<string[]> {
    return (await this.entries()).map((e) => e.id);
  }

  /** Every entry of `tasks/` with what the listing says it is (undefined where the file system does not say). */
  private async entries(): Promise<{ id: string; kind: TaskEntryKind | undefined }[]> {
    try {
      const listed = await readdir(storagePaths(this.root).tasks, { withFileTypes: true });
      return listed.filter((d) => !d.name.startsWith(".")).map((d) => ({ id: d.name, kind: entryKindOfDirent(d) }));
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
   * the rest load normally. A task's creation that a power cut stopped
   * before its first record was in place (no record, nothing but an empty
   * `io/` and the record's temp files: lib/store/record/start-cut-short.ts)
   * is removed where records may be quarantined, and named in `cutShort`.
   */
  async loadAll(options: { quarantine?: boolean; concurrency?: number } = {}): Promise<{ records: TaskRecord[]; unreadable: UnreadableTask[]; cutShort: string[] }> {
    const concurrency = options.concurrency ?? 64;
    const entries = await this.entries();
    const records: TaskRecord[] = [];
    const unreadable: UnreadableTask[] = [];
    const cutShort: string[] = [];
    await forEachBounded(entries, concurrency, async ({ id, kind }) => {
      let result: ReadResult;
      try {
        result = await this.read(id, kind);
      } catch (error) {
        if ((error as OutliveError).code === "E_NO_TASK") return; // removed while we listed
        throw error;
      }
      if (result.ok) {
        records.push(result.record);
        if (!isTerminal(result.record.state)) this.writer?.adoptLive(id);
      }
      else {
        const mayMove = options.quarantine !== false && !this.readOnly;
        if (mayMove && result.problem.kind === "corrupt" && result.problem.reason === RECORD_MISSING && removeStartCutShort(this.paths(id))) {
          cutShort.push(id);
          return;
        }
        const quarantinedTo = result.problem.kind === "corrupt" && mayMove ? await this.quarantine(id, result.problem.reason) : null;
        unreadable.push({ id, problem: result.problem, quarantinedTo });
      }
    });
    records.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    return { records, unreadable, cutShort };
  }

  /** Moves a task directory aside (never deletes it) with the reason in `quarantine-reason.txt`. */
  async quarantine(id: string, reason: string): Promise<string> {
    return quarantineTask(this.root, id, this.paths(id).dir, reason);
  }

  /** Quarantined entries (name, reason), for `ps`. */
  async quarantined(): Promise<string[]> {
    return listQuarantined(this.root);
  }
}
