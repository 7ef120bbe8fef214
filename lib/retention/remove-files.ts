import { randomBytes } from "node:crypto";
import { mkdirSync, renameSync } from "node:fs";
import { readdir, rm, unlink } from "node:fs/promises";
import { join } from "node:path";
import { removingPath, storagePaths } from "../store/layout.ts";
import { durableWriteRenamed } from "../store/write/cut-seam.ts";

/**
 * Takes entries out of the storage, each in one step: its whole directory
 * is renamed into `removing/`. A crash before a rename leaves that task
 * whole; after it, the task is gone and what is left in `removing/` is
 * deleted later (`purgeRemoved`, also at the next open). Synchronous renames:
 * thousands of them at an open cost a third of what the thread pool's
 * round trips would.
 *
 * @example
 * ```ts
 * import { mkdirSync, mkdtempSync, existsSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { moveAside, purgeRemoved } from "./remove-files.ts";
 * const root = mkdtempSync(join(tmpdir(), "outlive-rm-"));
 * mkdirSync(join(root, "tasks", "t-1", "io"), { recursive: true });
 * moveAside(root, [{ path: join(root, "tasks", "t-1"), name: "t-1" }], () => {});
 * console.log(existsSync(join(root, "tasks", "t-1"))); // false
 * await purgeRemoved(root);
 * rmSync(root, { recursive: true });
 * ```
 */
export function moveAside(root: string, entries: ReadonlyArray<{ path: string; name: string }>, each: (name: string) => void): void {
  if (entries.length === 0) return;
  mkdirSync(storagePaths(root).removing, { recursive: true, mode: 0o700 });
  const tag = randomBytes(4).toString("hex");
  for (const { path, name } of entries) {
    renameSync(path, removingPath(root, name, tag));
    durableWriteRenamed("retention");
    each(name);
  }
}

/**
 * Deletes what `moveAside` put aside (also what a crashed process left).
 * Stops early, leaving the rest for later, once `signal` aborts.
 */
export async function purgeRemoved(root: string, signal?: AbortSignal): Promise<number> {
  const dir = storagePaths(root).removing;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let purged = 0;
  for (const name of names) {
    if (signal?.aborted) break;
    await rm(join(dir, name), { recursive: true, force: true });
    purged++;
  }
  return purged;
}

/** Unlinks a file, already gone counting as done. */
export async function unlinkIfThere(path: string): Promise<void> {
  await unlink(path).catch((error) => {
    if ((error as { code?: string }).code !== "ENOENT") throw error;
  });
}
