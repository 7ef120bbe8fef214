import { randomBytes } from "node:crypto";
import { open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/**
 * Writes a file so that a reader sees the old content or the new, never half:
 * a temp file in the same directory, fsync, rename over, fsync the directory
 * (so the rename itself survives a crash).
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
export async function writeFileAtomic(path: string, data: string, mode = 0o600): Promise<void> {
  const dir = dirname(path);
  const temp = tempPathFor(path);
  const handle = await open(temp, "wx", mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
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
  await syncPath(dir);
}

/** A hidden temp file beside `path`, unique to this process and call: renamed over `path` once written. */
export function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
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
