import { closeSync, constants, fdatasyncSync, fstatSync, ftruncateSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { syncPath } from "../write/atomic-write.ts";
import { durableWriteKindOf, durableWriteRenamed } from "../write/cut-seam.ts";

/**
 * Errors that mean the file system has no room (or inodes) left for a new
 * file, while a file already holding blocks can still be overwritten.
 */
export function isNoSpace(error: unknown): boolean {
  const e = error as { code?: string; cause?: { code?: string } };
  return [e?.code, e?.cause?.code].some((code) => code === "ENOSPC" || code === "EDQUOT");
}

/**
 * Takes `bytes` of space beside a live task's record, while there is some:
 * its terminal record can then be written when the task's own output has
 * filled the disk. Filled with spaces, not a hole: a hole holds no blocks.
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync, statSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { reserveSpace } from "./record-reserve.ts";
 * const dir = mkdtempSync(join(tmpdir(), "outlive-reserve-"));
 * reserveSpace(join(dir, ".record.reserve"), 4096);
 * console.log(statSync(join(dir, ".record.reserve")).size); // 4096
 * rmSync(dir, { recursive: true });
 * ```
 */
export function reserveSpace(path: string, bytes: number): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  let failure: unknown = null;
  try {
    // Not synced: a reserve lost to a crash is only a reserve fewer, and writeIntoReserve checks its size.
    // A disk that fills part way returns a short write first and ENOSPC only on the next: write to the end.
    const buffer = Buffer.alloc(bytes, " ");
    for (let done = 0; done < bytes;) done += writeSync(fd, buffer, done, bytes - done, done);
  } catch (error) {
    failure = error;
  }
  closeSync(fd);
  if (failure) {
    // A reserve that did not get its space is no reserve: nothing half-made is left.
    unlinkSync(path);
    throw failure;
  }
}

/**
 * Replaces `target` with `data` written into the reserved file `reserve`
 * (overwritten in place, cut to length, synced when `durable`, renamed
 * over): the same all-or-nothing result as an atomic write with the same
 * `durable`, without a block of new space. Throws when `data` does not fit;
 * the reserve is then left as it was.
 */
export async function writeIntoReserve(reserve: string, target: string, data: string, dir: string, durable = true): Promise<void> {
  const bytes = Buffer.from(data);
  const fd = openSync(reserve, constants.O_WRONLY | constants.O_NOFOLLOW);
  try {
    if (bytes.length > fstatSync(fd).size) throw Object.assign(new Error(`the record (${bytes.length} bytes) is larger than its reserve`), { code: "ENOSPC" });
    writeSync(fd, bytes, 0, bytes.length, 0);
    ftruncateSync(fd, bytes.length);
    if (durable) fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(reserve, target);
  // A power-cut test's debug seam (off unless its variable is set): the rename is done, its directory's flush not yet.
  if (durable) durableWriteRenamed(durableWriteKindOf(target, data));
  if (durable) await syncPath(dir);
}
