import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, writeFileSync } from "node:fs";
import { EXIT_MARKER_PLACEHOLDER } from "../observe/exit-marker.ts";
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
 * Nothing connects the task to this process by a pipe. The space the end
 * needs is taken now, while there is some: the marker's placeholder bytes
 * (which the wrapper's code overwrites) and the watchdog's `timed-out.reserved`.
 */
export async function spawnTask(argv: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; paths: TaskPaths }): Promise<SpawnedTask> {
  const fds: number[] = [];
  let child: ChildProcess;
  try {
    const exitFd = openSync(opts.paths.exit, "wx", 0o600);
    fds.push(exitFd);
    // Through a second open: fd 3's own offset must stay at 0 for the wrapper (Deno's positioned write moves it).
    writeFileSync(opts.paths.exit, EXIT_MARKER_PLACEHOLDER, { flag: "r+" });
    closeSync(openSync(`${opts.paths.timedOut}.reserved`, "w", 0o600));
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
