import { statSync } from "node:fs";
import { OutliveError } from "../../lib/errors.ts";

/**
 * Checks a storage path before a command touches it, so every command says
 * the same one line: a path that is not a directory is refused (E_STORAGE),
 * and a missing one is made only by a command that `creates` (run); a read
 * or a kill on a storage that is not there says so (E_NO_STORAGE) and makes
 * nothing. Returns the root.
 *
 * @example
 * ```ts
 * import { checkStoragePath } from "./storage-path.ts";
 * try {
 *   checkStoragePath("/no/such/storage", { creates: false });
 * } catch (error) {
 *   console.log((error as { code: string }).code); // "E_NO_STORAGE"
 * }
 * ```
 */
export function checkStoragePath(root: string, { creates }: { creates: boolean }): string {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(root).isDirectory();
  } catch (error) {
    const errno = (error as { code?: string }).code;
    if (errno === "ENOENT" && creates) return root;
    if (errno === "ENOENT") {
      throw new OutliveError("E_NO_STORAGE", `no storage at ${root}: nothing was made (outlive run makes it; check --storage or $OUTLIVE_STORAGE)`);
    }
    if (errno === "ENOTDIR") throw notADirectory(root);
    throw new OutliveError("E_STORAGE", `cannot reach the storage ${root}: ${(error as Error).message}`, { cause: error });
  }
  if (!isDirectory) throw notADirectory(root);
  return root;
}

function notADirectory(root: string): OutliveError<string> {
  return new OutliveError("E_STORAGE", `the storage path ${root} is not a directory (--storage names a directory outlive keeps its tasks in)`);
}
