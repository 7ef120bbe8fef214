import { randomBytes } from "node:crypto";
import { open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { durableWriteKindOf, durableWriteRenamed } from "./cut-seam.ts";

/** How a replacing write is made. */
export interface AtomicWriteOptions {
  /** File mode of a file made new (default 0o600). */
  mode?: number;
  /**
   * Whether the new content must survive a crash of the host (default true):
   * the data is flushed (fdatasync) before the rename, and the directory
   * after it. Without it the write is still whole-or-nothing to every reader
   * and across a crash or SIGKILL of the writer (the page cache holds it);
   * only a host crash may lose it. See the README's "What each write protects".
   */
  durable?: boolean;
}

/**
 * Writes a file so that a reader sees the old content or the new, never half:
 * a temp file in the same directory, renamed over. Durable (the default): the
 * temp file's data is flushed first and the directory after (so the rename
 * itself survives a host crash).
 *
 * @example
 * ```ts
 * import { mkdtempSync, readFileSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { writeFileAtomic } from "./atomic-write.ts";
 * const dir = mkdtempSync(join(tmpdir(), "outlive-atomic-"));
 * await writeFileAtomic(join(dir, "record.json"), "{\"state\":\"running\"}\n");
 * console.log(readFileSync(join(dir, "record.json"), "utf8")); // {"state":"running"}
 * rmSync(dir, { recursive: true });
 * ```
 */
export async function writeFileAtomic(path: string, data: string, options: AtomicWriteOptions = {}): Promise<void> {
  const dir = dirname(path);
  const temp = tempPathFor(path);
  const durable = options.durable ?? true;
  const handle = await open(temp, "wx", options.mode ?? 0o600);
  try {
    await handle.writeFile(data);
    // fdatasync: the file is new, so its size (the metadata a read needs) is flushed with the data.
    if (durable) await handle.datasync();
  } catch (error) {
    await handle.close();
    await unlink(temp).catch(() => {});
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
  // A power-cut test's debug seam (off unless its variable is set): the rename is done, its directory's flush not yet.
  if (durable) durableWriteRenamed(durableWriteKindOf(path, data));
  if (durable) await syncPath(dir);
}

/** A hidden temp file beside `path`, unique to this process and call: renamed over `path` once written. */
export function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
}

/** Whether the file name `name` is one {@link tempPathFor} makes for a file named `base`: a write that never got to its rename. */
export function isTempNameFor(name: string, base: string): boolean {
  const prefix = `.${base}.`;
  return name.startsWith(prefix) && /^\d+\.[0-9a-f]{8}\.tmp$/.test(name.slice(prefix.length));
}

/** fsync(2) of a file or a directory (a directory's fsync makes the renames in it durable). */
export async function syncPath(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
