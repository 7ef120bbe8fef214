import { type ChildProcess, spawn } from "node:child_process";
import { type FileHandle, open, writeFile } from "node:fs/promises";
import { EXIT_MARKER_PLACEHOLDER } from "../observe/exit-marker.ts";
import { OutliveError } from "../errors.ts";
import { type TaskPaths, timedOutReservePath } from "../store/layout.ts";

/** The files a task's spawn makes: its output, its exit marker, and the watchdog's reserve. All absolute paths. */
export interface SpawnFiles {
  stdout: string;
  stderr: string;
  exit: string;
  timedOutReserve: string;
}

/** The spawn files of a task directory. Pure. */
export function spawnFilesOf(paths: TaskPaths): SpawnFiles {
  return { stdout: paths.stdout, stderr: paths.stderr, exit: paths.exit, timedOutReserve: timedOutReservePath(paths) };
}

export interface SpawnedTask {
  pid: number;
  child: ChildProcess;
  /**
   * The window the process started in, wall-clock ms: just before `spawn()`
   * was called, and when its `spawn` event came. Tighter than the kernel's
   * start time (clock ticks, 10 ms), which it bounds.
   */
  startedWithin: { after: number; before: number };
}

/**
 * Starts a task's full argv (placement prefix + shim or wrapper) as the leader
 * of a new session and process group. Output goes straight to `io/stdout` and
 * `io/stderr`, stdin is the shim's settings (a pipe the shim reads to its end
 * and then replaces with /dev/null) or /dev/null, and fd 3 is `io/exit`, opened here
 * create-exclusive so no earlier run's marker can be mistaken for this one's.
 * Nothing connects the task to this process by a pipe once its settings are read. The space the end
 * needs is taken now, while there is some: the marker's placeholder bytes
 * (which the wrapper's code overwrites) and the watchdog's `timed-out.reserved`.
 */
export interface SpawnTaskOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  files: SpawnFiles;
  /** What the process reads on stdin (outlive-shim's settings): a pipe written and closed here. Null or absent: /dev/null. */
  stdin?: Buffer | null;
  /** The process's argv[0], where it is to differ from argv's first word (the shim's name, not its path). */
  argv0?: string | null;
}

export async function spawnTask(argv: string[], opts: SpawnTaskOptions): Promise<SpawnedTask> {
  const handles: FileHandle[] = [];
  let child: ChildProcess;
  let started: Promise<void>;
  let after = 0;
  try {
    // Made on the thread pool, side by side: a create can wait behind the file system's journal commit (another
    // task's end being flushed), and on the main thread that wait stalled every other task (38% of the main
    // thread's time with 200 tasks started at once, profiled).
    const made = await Promise.allSettled([
      open(opts.files.exit, "wx", 0o600),
      open(opts.files.stdout, "a", 0o600),
      open(opts.files.stderr, "a", 0o600),
      open(opts.files.timedOutReserve, "w", 0o600).then((h) => h.close()),
    ]);
    for (const m of made.slice(0, 3)) if (m.status === "fulfilled") handles.push(m.value as FileHandle);
    const failed = made.find((m) => m.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    const [exitFile, out, err] = handles;
    // Through a second open: fd 3's own offset must stay at 0 for the wrapper (Deno's positioned write moves it).
    await writeFile(opts.files.exit, EXIT_MARKER_PLACEHOLDER, { flag: "r+" });
    after = Date.now();
    child = spawn(argv[0], argv.slice(1), {
      cwd: opts.cwd,
      env: opts.env,
      detached: true,
      stdio: [opts.stdin ? "pipe" : "ignore", out.fd, err.fd, exitFile.fd],
      ...(opts.argv0 ? { argv0: opts.argv0 } : {}),
    });
    // Listened for at once, before anything else is asked of the child: the event may come while the files are
    // being closed below, and a spawn that failed (EMFILE making its stdin pipe) has no stdin to write.
    started = new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", (error) =>
        reject(new OutliveError("E_SPAWN", `Could not start ${argv[0]}: ${error.message}`, { cause: error })));
    });
    if (opts.stdin && child.stdin) {
      // The shim reads its settings to the end before it does anything; a pipe that breaks (it died) is its
      // own end to report, not this process's error.
      child.stdin.on("error", () => {});
      child.stdin.end(opts.stdin);
    }
    // Awaited below; a failure that comes first must not count as unhandled meanwhile.
    started.catch(() => {});
  } catch (error) {
    throw new OutliveError("E_SPAWN", `Could not start ${argv[0]}: ${(error as Error).message}`, { cause: error });
  } finally {
    await Promise.all(handles.map((h) => h.close()));
  }
  await started;
  const before = Date.now();
  // The supervisor may exit while the task runs on.
  child.unref();
  return { pid: child.pid!, child, startedWithin: { after, before } };
}
