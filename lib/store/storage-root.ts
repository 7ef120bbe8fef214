import { homedir } from "node:os";
import { join } from "node:path";

/**
 * Where tasks are stored when the caller names no directory:
 * `$OUTLIVE_STORAGE`, else `$XDG_STATE_HOME/outlive`, else `~/.local/state/outlive`.
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
