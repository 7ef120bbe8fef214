import {
  defaultStorageRoot,
  type Incarnation,
  OutliveError,
  storageHolder,
  Supervisor,
  type SupervisorOptions,
  type TaskRecord,
  TaskStore,
  type UnreadableTask,
} from "../../lib/mod.ts";
import { openWaiting } from "./reach.ts";

/** Opens a supervisor for the length of one command: it replays, `fn` runs, it closes and the tasks run on. */
export async function withSupervisor<T>(options: SupervisorOptions, fn: (sup: Supervisor) => Promise<T>): Promise<T> {
  const sup = await openWaiting(options);
  try {
    return await fn(sup);
  } finally {
    await sup.close();
  }
}

export interface StorageView {
  records: TaskRecord[];
  unreadable: UnreadableTask[];
  /** The live supervisor that holds the storage, when one does; its records are current. */
  holder: Incarnation | null;
}

/**
 * The tasks as they truly are now. With no supervisor holding the storage,
 * one is opened briefly so that replay brings every record up to date; with
 * one, its records are read without touching anything.
 */
export async function viewStorage(options: SupervisorOptions): Promise<StorageView> {
  const root = options.storage ?? defaultStorageRoot();
  const store = await TaskStore.open(root);
  let holder = await storageHolder(root);
  if (!holder) {
    try {
      return await withSupervisor({ ...options, log: () => {} }, async (sup) => ({
        records: sup.list(),
        unreadable: sup.replayReport.unreadable,
        holder: null,
      }));
    } catch (error) {
      if ((error as OutliveError).code !== "E_STORAGE_LOCKED") throw error;
      holder = await storageHolder(root);
    }
  }
  const { records, unreadable } = await store.loadAll({ quarantine: false });
  return { records, unreadable, holder };
}
