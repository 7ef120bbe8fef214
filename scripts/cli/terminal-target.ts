// Deep imports, not lib/mod.ts: a command loads only what it uses (not the census and its TOML parser).
import type { PtyPaths } from "../../lib/pty/holder.ts";
import { terminalOf } from "../../lib/pty/task-terminal.ts";
import { taskPaths } from "../../lib/store/layout.ts";
import type { TaskRecord } from "../../lib/store/record/record.ts";
import { defaultStorageRoot } from "../../lib/store/storage/storage-root.ts";
import type { SupervisorOptions } from "../../lib/supervisor/options.ts";
import { viewStorage } from "./storage-view.ts";
import { noSuchTask } from "./no-such-task.ts";
import { UsageError } from "./usage-error.ts";

/**
 * A PTY task's terminal, for a command in its own process: the record as
 * replay (or the live supervisor holding the storage) has it, then the
 * terminal's files in its task directory. No supervisor stays open: the
 * terminal is reached through the task's own files.
 */
export async function terminalTarget(options: SupervisorOptions, id: string): Promise<{ record: TaskRecord; paths: PtyPaths; io: string }> {
  if (!id) throw new UsageError("needs a task id");
  const view = await viewStorage(options);
  const record = view.records.find((r) => r.id === id);
  if (!record) throw noSuchTask(id, options.storage ?? defaultStorageRoot());
  const task = taskPaths(options.storage ?? defaultStorageRoot(), id);
  return { record, paths: terminalOf(record, task.dir), io: task.io };
}
