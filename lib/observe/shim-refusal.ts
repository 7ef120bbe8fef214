import { closeSync, constants, openSync, readSync } from "node:fs";

/** More than the shim's one line ever is (its values are shown cut at 64 bytes); the rest is not read. */
const MAX_BYTES = 4096;

/**
 * The line outlive-shim left in `io/shim-refused` when it refused to start
 * the task (exit 125, nothing run), or null when there is none. Read
 * without following a symlink; the shim writes it by temp + rename, so a
 * reader never sees half of it.
 *
 * @example
 * ```ts
 * import { readShimRefusal } from "./shim-refusal.ts";
 * console.log(readShimRefusal("/nonexistent/io/shim-refused")); // null
 * ```
 */
export function readShimRefusal(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    const buf = Buffer.alloc(MAX_BYTES);
    const n = readSync(fd, buf, 0, MAX_BYTES, 0);
    const line = buf.toString("utf8", 0, n).split("\n")[0].trim();
    return line === "" ? null : line;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
