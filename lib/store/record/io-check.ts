import { lstatSync } from "node:fs";
import type { TaskPaths } from "../layout.ts";

/**
 * Replay and observation open the files in a task's `io/` by path, so each
 * must be what the wrapper makes (a directory, regular files) or absent:
 * never a link out of the storage, never a FIFO that blocks its reader.
 * Returns what is wrong, or null.
 *
 * @example
 * ```ts
 * import { taskIoProblem } from "./io-check.ts";
 * import { taskPaths } from "../layout.ts";
 * console.log(taskIoProblem(taskPaths("/nonexistent", "t-1"))); // null (no io/ yet)
 * ```
 */
export function taskIoProblem(p: TaskPaths): string | null {
  const io = kind(p.io);
  if (io === "absent") return null;
  if (io === "symlink") return "io is a symlink (not followed)";
  if (io !== "directory") return "io is not a directory";
  const files: Array<[string, string]> = [["stdout", p.stdout], ["stderr", p.stderr], ["exit", p.exit], ["timed-out", p.timedOut]];
  for (const [name, path] of files) {
    const k = kind(path);
    if (k === "symlink") return `io/${name} is a symlink (not followed)`;
    if (k !== "absent" && k !== "file") return `io/${name} is not a regular file (${k})`;
  }
  return null;
}

function kind(path: string): "absent" | "symlink" | "directory" | "file" | "special" {
  try {
    const info = lstatSync(path);
    return info.isSymbolicLink() ? "symlink" : info.isDirectory() ? "directory" : info.isFile() ? "file" : "special";
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return "absent";
    throw error;
  }
}
