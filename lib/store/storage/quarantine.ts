import { lstat, readdir, rename } from "node:fs/promises";
import { writeFileAtomic } from "../write/atomic-write.ts";
import { durableWriteRenamed } from "../write/cut-seam.ts";
import { isQuarantineNote, quarantineName, quarantineNotePath, quarantinePath, storagePaths } from "../layout.ts";

/**
 * Moves the directory `dir` of task `id` into the storage's `quarantine/`
 * (never deletes it) and writes `reason` in a note: inside it when it is a
 * directory, beside it when something else was put where the directory
 * was. Returns where it went.
 *
 * @example
 * ```ts
 * import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { taskPaths } from "../layout.ts";
 * import { listQuarantined, quarantineTask } from "./quarantine.ts";
 * const root = mkdtempSync(join(tmpdir(), "outlive-quarantine-"));
 * mkdirSync(join(root, "quarantine"));
 * mkdirSync(taskPaths(root, "t-bad").dir, { recursive: true });
 * await quarantineTask(root, "t-bad", taskPaths(root, "t-bad").dir, "record.json is missing");
 * console.log(await listQuarantined(root)); // ["t-bad.<time>"]
 * rmSync(root, { recursive: true });
 * ```
 */
export async function quarantineTask(root: string, id: string, dir: string, reason: string): Promise<string> {
  const target = quarantinePath(root, quarantineName(id, new Date()));
  await rename(dir, target);
  durableWriteRenamed("quarantine");
  const entry = await lstat(target);
  await writeFileAtomic(quarantineNotePath(target, entry.isDirectory() && !entry.isSymbolicLink()), `${reason}\n`);
  return target;
}

/** The names of the quarantined entries (the notes beside them left out). */
export async function listQuarantined(root: string): Promise<string[]> {
  return (await readdir(storagePaths(root).quarantine)).filter((n) => !isQuarantineNote(n));
}
