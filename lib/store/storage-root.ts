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

/** The files of one task: its directory is the whole truth about it. */
export interface TaskPaths {
  dir: string;
  record: string;
  io: string;
  stdout: string;
  stderr: string;
  /** Written once by the wrapper, through an inherited descriptor: the exit code. */
  exit: string;
  /** Touched by the wrapper's watchdog when it ended the task at its deadline. */
  timedOut: string;
}

/**
 * Where the files of task `id` live under the storage `root`. Pure: nothing is read or made.
 *
 * @example
 * ```ts
 * import { taskPaths } from "./storage-root.ts";
 * const paths = taskPaths("/srv/outlive", "t-1");
 * console.log(paths.record, paths.exit); // "/srv/outlive/tasks/t-1/record.json" "/srv/outlive/tasks/t-1/io/exit"
 * ```
 */
export function taskPaths(root: string, id: string): TaskPaths {
  const dir = join(root, "tasks", id);
  const io = join(dir, "io");
  return {
    dir,
    record: join(dir, "record.json"),
    io,
    stdout: join(io, "stdout"),
    stderr: join(io, "stderr"),
    exit: join(io, "exit"),
    timedOut: join(io, "timed-out"),
  };
}
