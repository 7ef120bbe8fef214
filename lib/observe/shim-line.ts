import { closeSync, constants, openSync, readSync } from "node:fs";

/** More than the shim's one line ever is (its values are shown cut at 64 bytes); the rest is not read. */
const MAX_BYTES = 4096;

/**
 * The one line outlive-shim left in a file of `io/`, or null when there is
 * none: `io/shim-refused` when it refused to start the task (exit 125,
 * nothing run), `io/host-unanswered` when it asked whether the host was
 * stopping and had no answer in time. Read without following a symlink;
 * the shim writes both by temp + rename, so a reader never sees half of one.
 *
 * @example
 * ```ts
 * import { readShimLine } from "./shim-line.ts";
 * console.log(readShimLine("/nonexistent/io/shim-refused")); // null
 * ```
 */
export function readShimLine(path: string): string | null {
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
