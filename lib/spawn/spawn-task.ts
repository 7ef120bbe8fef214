import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { OutliveError } from "../errors.ts";
import type { TaskPaths } from "../store/storage-root.ts";

export interface SpawnedTask {
  pid: number;
  child: ChildProcess;
}

/**
 * Starts a task's full argv (placement prefix + wrapper) as the leader of a
 * new session and process group. Output goes straight to `io/stdout` and
 * `io/stderr`, stdin is /dev/null, and fd 3 is `io/exit`, opened here
 * create-exclusive so no earlier run's marker can be mistaken for this one's.
 * Nothing connects the task to this process by a pipe.
 */
export async function spawnTask(argv: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; paths: TaskPaths }): Promise<SpawnedTask> {
  const fds: number[] = [];
  let child: ChildProcess;
  try {
    const exitFd = openSync(opts.paths.exit, "wx", 0o600);
    fds.push(exitFd);
    const out = openSync(opts.paths.stdout, "a", 0o600);
    fds.push(out);
    const err = openSync(opts.paths.stderr, "a", 0o600);
    fds.push(err);
    child = spawn(argv[0], argv.slice(1), {
      cwd: opts.cwd,
      env: opts.env,
      detached: true,
      stdio: ["ignore", out, err, exitFd],
    });
  } catch (error) {
    throw new OutliveError("E_SPAWN", `Could not start ${argv[0]}: ${(error as Error).message}`, { cause: error });
  } finally {
    for (const fd of fds) closeSync(fd);
  }
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", (error) =>
      reject(new OutliveError("E_SPAWN", `Could not start ${argv[0]}: ${error.message}`, { cause: error })));
  });
  // The supervisor may exit while the task runs on.
  child.unref();
  return { pid: child.pid!, child };
}
