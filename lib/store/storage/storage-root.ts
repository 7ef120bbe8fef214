import { homedir } from "node:os";
import { join } from "node:path";

/**
 * Where tasks are stored when the caller names no directory:
 * `$OUTLIVE_STORAGE`, else `$XDG_STATE_HOME/outlive`, else `~/.local/state/outlive`.
 *
 * @example
 * ```ts
 * import { defaultStorageRoot } from "./storage-root.ts";
 * console.log(defaultStorageRoot({ OUTLIVE_STORAGE: "/srv/outlive" })); // "/srv/outlive"
 * console.log(defaultStorageRoot({ XDG_STATE_HOME: "/home/ada/.state" })); // "/home/ada/.state/outlive"
 * console.log(defaultStorageRoot({ HOME: "/home/ada" })); // "/home/ada/.local/state/outlive"
 * ```
 */
export function defaultStorageRoot(env: Record<string, string | undefined> = process.env): string {
  if (env.OUTLIVE_STORAGE) return env.OUTLIVE_STORAGE;
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, "outlive");
  return join(env.HOME || homedir(), ".local", "state", "outlive");
}

// Where the files are under the root is layout.ts's; these names stay importable from here.
export { taskPaths, type TaskPaths } from "../layout.ts";
