// Deep imports, not lib/mod.ts: `ps` loads this, and must not load the census (see scripts/outlive.ts).
import type { OutliveError } from "../../lib/errors.ts";
import type { Incarnation } from "../../lib/store/storage/incarnation.ts";
import type { TaskRecord } from "../../lib/store/record/record.ts";
import { storageHolder } from "../../lib/store/storage/storage-lock.ts";
import { defaultStorageRoot } from "../../lib/store/storage/storage-root.ts";
import { TaskStore, type UnreadableTask } from "../../lib/store/task-store.ts";
import type { SupervisorOptions } from "../../lib/supervisor/options.ts";
import { withSupervisor } from "./reach.ts";
import { checkStoragePath } from "./storage-path.ts";

export interface StorageView {
  records: TaskRecord[];
  unreadable: UnreadableTask[];
  /** The live supervisor that holds the storage, when one does; its records are current. */
  holder: Incarnation | null;
  /** Why the storage could not be written (e.g. ENOSPC, EROFS), when the view was made read-only. */
  notWritable: string | null;
  /** Decisions replay made for this view but could not store (read-only view). */
  unstored: Array<{ id: string; state: string; reason: string }>;
}

/** The errnos for which a view goes on read-only rather than failing. */
const READ_ONLY_ERRNOS = new Set(["ENOSPC", "EDQUOT", "EROFS", "EACCES", "EPERM"]);

/**
 * The tasks as they truly are now. With no supervisor holding the storage,
 * one is opened briefly so that replay brings every record up to date; with
 * one, its records are read without touching anything. A storage that
 * cannot be written (full, read-only, not ours to write) is still shown:
 * replay then decides in memory and says what it could not store.
 */
export async function viewStorage(options: SupervisorOptions): Promise<StorageView> {
  const root = checkStoragePath(options.storage ?? defaultStorageRoot(), { creates: false });
  const store = await TaskStore.open(root, { readOnly: true });
  let holder = await storageHolder(root);
  if (!holder) {
    try {
      return await withSupervisor({ ...options, log: () => {} }, async (sup) => ({
        records: sup.list(),
        unreadable: sup.replayReport.unreadable,
        holder: null,
        notWritable: null,
        unstored: [],
      }));
    } catch (error) {
      const errno = storageErrno(error);
      if (errno && READ_ONLY_ERRNOS.has(errno)) {
        return await withSupervisor({ ...options, log: () => {}, readOnly: true }, async (sup) => ({
          records: sup.list(),
          unreadable: sup.replayReport.unreadable,
          holder: null,
          notWritable: `${errno}: ${(error as Error).message}`,
          unstored: sup.replayReport.unstored,
        }));
      }
      if ((error as OutliveError).code !== "E_STORAGE_LOCKED") throw error;
      holder = await storageHolder(root);
    }
  }
  const { records, unreadable } = await store.loadAll({ quarantine: false });
  return { records, unreadable, holder, notWritable: null, unstored: [] };
}

/** The errno behind a storage error (the error itself, its cause, or the code in its message). */
export function storageErrno(error: unknown): string | null {
  const e = error as { code?: string; cause?: { code?: string }; message?: string };
  if (e?.code && /^E[A-Z]+$/.test(e.code) && !e.code.startsWith("E_")) return e.code;
  if (e?.cause?.code && /^E[A-Z]+$/.test(e.cause.code)) return e.cause.code;
  return /\b(E[A-Z]{3,})\b:/.exec(e?.message ?? "")?.[1] ?? null;
}
