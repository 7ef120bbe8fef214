import { statfsSync } from "node:fs";

/**
 * Less than this is free: the disk is full for a writer. Not 0: a write
 * that fails leaves the last part-filled blocks free, and outlive frees a
 * task's reserves once its end is stored.
 */
export const FULL_BELOW_BYTES = 64 * 1024;

/**
 * Whether the file system holding `path` is full for an unprivileged writer
 * (statfs's `bavail` below FULL_BELOW_BYTES); false where that cannot be asked.
 *
 * @example
 * ```ts
 * import { fileSystemFull } from "./space.ts";
 * console.log(fileSystemFull("/nonexistent")); // false: nothing to ask
 * ```
 */
export function fileSystemFull(path: string): boolean {
  try {
    const info = statfsSync(path);
    return Number(info.blocks) > 0 && Number(info.bavail) * Number(info.bsize) < FULL_BELOW_BYTES;
  } catch {
    return false;
  }
}

/**
 * The words a reason gets when the task ended on a full storage with some
 * output: what it wrote after the disk filled is not there.
 *
 * @example
 * ```ts
 * import { fullDiskWords } from "./space.ts";
 * console.log(fullDiskWords(true, "/srv/outlive")); // "; its output is cut off where the disk filled (less than 64 KiB was free on the storage /srv/outlive when it ended)"
 * console.log(fullDiskWords(false, "/srv/outlive")); // ""
 * ```
 */
export function fullDiskWords(full: boolean, root: string): string {
  return full ? `; its output is cut off where the disk filled (less than 64 KiB was free on the storage ${root} when it ended)` : "";
}
