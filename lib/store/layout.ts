import { join } from "node:path";

/*
 * The storage's layout: every file and directory outlive keeps under a
 * storage root is named here and nowhere else in lib/. Pure: nothing is read
 * or made. outlive-shim (shim/, its settings from lib/spawn/shim-settings.ts)
 * and the shell programs (lib/spawn/wrapper.ts, lib/pty/holder.ts,
 * lib/output/trim-loop.ts) are handed these paths; the few names they derive
 * from them themselves are noted where they are defined.
 *
 * <root>/
 *   supervisor.lock            the holder's incarnation (storage-lock.ts): made as `.supervisor.lock.TAG`
 *                              and linked into place; `supervisor.lock.break` while a stale lock is moved
 *                              aside to `supervisor.lock.stale-TAG`
 *   .ballast                   space given up when a writable open meets a full disk (ballast.ts)
 *   generation-floor           the largest generation ever removed (lib/retention)
 *   control/supervisor.sock    the control channel (the wire protocol), in a 0700 directory of its own (lib/rpc)
 *   spawner/                   the spawner's socket, record and log (spawner.sock, spawner.json, spawner.log), 0700 (lib/spawner)
 *   incarnations/<id>.json     one a supervisor's life (incarnation.ts)
 *   reserves/KIND-BYTES-TAG    space for records on a full disk (reserve-pool.ts names them)
 *   quarantine/<id>.<time>     a task directory whose record could not be read, `quarantine-reason.txt`
 *                              in it; an entry that is no directory has `<name>.reason.txt` beside it
 *   removing/<name>.<tag>      removed entries waiting to be deleted (lib/retention)
 *   tasks/.write-check         the open's probe of whether the storage takes writes
 *   tasks/<id>/                a task's directory: the whole truth about it
 *     record.json
 *     launch-record.json       a launched harness's launch record (launchRecordPath)
 *     .record.reserve, .record.reserve-live-1, .record.reserve-live-2
 *                              the per-task reserves an older outlive made (used, then removed, at the end)
 *     io/stdout, io/stderr     the output; `STREAM.dropped` and `trim-failed` beside them (lib/output)
 *     io/exit                  the exit code, written by the shim (or wrapper) through an inherited descriptor
 *     io/timed-out             made by the watchdog at the deadline, or by a live supervisor's deadline kill when its
 *                              timer came first (lib/kill/deadline-mark.ts); `timed-out.reserved` holds its place
 *     io/command-pid           the pid of the user's command itself, written just before its exec (by the shim's
 *                              child through `command-pid.tmp` and a rename; by the wrapper's subshell in one echo)
 *     io/ended                 made (empty) the moment the command ended; its file time dates the end
 *     io/host-stopping         made when the task got SIGTERM while systemd was stopping the system
 *     io/host-unanswered       the shim's line when, after a SIGTERM from outside, that question had no answer in time
 *     io/attempts              a task under a restart policy: one JSON line per attempt's start and end (the shim)
 *     io/pids.events, io/cpu.stat  a task with a CPU or pids limit: its cgroup's counters, copied by the shim as it ended
 *     pty/in, pty/info         a PTY task's input FIFO and its terminal's `PID TTY` (lib/pty; `info.tmp` while written)
 *
 * A file replaced atomically has a hidden `.NAME.PID.TAG.tmp` beside it while it is written (atomic-write.ts).
 */

// The names spelled in more than one path below.
const TASKS = "tasks";
const QUARANTINE = "quarantine";
const INCARNATIONS = "incarnations";
const REMOVING = "removing";
const LOCK = "supervisor.lock";
const SIDE_NOTE = ".reason.txt";

/** The storage's own files and directories, outside any task's. */
export interface StoragePaths {
  root: string;
  /** One directory a task, named by its id. */
  tasks: string;
  /** Written (not flushed) at every writable open to see whether the storage takes writes; nothing reads it. */
  writeCheck: string;
  quarantine: string;
  incarnations: string;
  reserves: string;
  /** Where removed entries wait to be deleted: out of `tasks/`, so nothing reads them as tasks. */
  removing: string;
  /** The control socket's directory, 0700. */
  control: string;
  controlSocket: string;
  /** The spawner's directory, 0700 (lib/spawner). */
  spawner: string;
  lock: string;
  /** Made by link while a stale lock is moved aside, so only one contender moves it. */
  lockBreaker: string;
  ballast: string;
  generationFloor: string;
}

/**
 * Where the storage's own files live under `root`.
 *
 * @example
 * ```ts
 * import { storagePaths } from "./layout.ts";
 * const s = storagePaths("/srv/outlive");
 * console.log(s.lock, s.controlSocket); // "/srv/outlive/supervisor.lock" "/srv/outlive/control/supervisor.sock"
 * console.log(s.writeCheck); // "/srv/outlive/tasks/.write-check"
 * ```
 */
export function storagePaths(root: string): StoragePaths {
  const tasks = join(root, TASKS);
  const control = join(root, "control");
  return {
    root,
    tasks,
    writeCheck: join(tasks, ".write-check"),
    quarantine: join(root, QUARANTINE),
    incarnations: join(root, INCARNATIONS),
    reserves: join(root, "reserves"),
    removing: join(root, REMOVING),
    control,
    controlSocket: join(control, "supervisor.sock"),
    spawner: join(root, "spawner"),
    lock: join(root, LOCK),
    lockBreaker: join(root, `${LOCK}.break`),
    ballast: join(root, ".ballast"),
    generationFloor: join(root, "generation-floor"),
  };
}

/**
 * The lock as it is written before it is linked into place (hidden, so it is
 * never taken for the lock), and a stale lock moved aside before it is
 * deleted. `tag` makes each unique.
 *
 * @example
 * ```ts
 * import { lockAsidePath, lockTempPath } from "./layout.ts";
 * console.log(lockTempPath("/s", "42.ab12")); // "/s/.supervisor.lock.42.ab12"
 * console.log(lockAsidePath("/s", "cd34")); // "/s/supervisor.lock.stale-cd34"
 * ```
 */
export function lockTempPath(root: string, tag: string): string {
  return join(root, `.${LOCK}.${tag}`);
}

/** See lockTempPath. */
export function lockAsidePath(root: string, tag: string): string {
  return join(root, `${LOCK}.stale-${tag}`);
}

/**
 * The stored incarnation `id`.
 *
 * @example
 * ```ts
 * import { incarnationPath } from "./layout.ts";
 * console.log(incarnationPath("/s", "i-1")); // "/s/incarnations/i-1.json"
 * ```
 */
export function incarnationPath(root: string, id: string): string {
  return join(root, INCARNATIONS, `${id}.json`);
}

/**
 * Quarantine: a task directory that cannot be read as a record is moved to
 * `quarantine/<id>.<time>` (never deleted), with the reason in a note. The
 * note is inside a directory, beside anything else (a file or a symlink put
 * where the task's directory was), so listing `quarantine/` leaves the
 * notes out by name.
 *
 * @example
 * ```ts
 * import { isQuarantineNote, quarantineName, quarantineNotePath, quarantinePath } from "./layout.ts";
 * const entry = quarantinePath("/s", quarantineName("t-1", new Date("2026-12-01T10:00:00.000Z")));
 * console.log(entry); // "/s/quarantine/t-1.2026-12-01T10-00-00-000Z"
 * console.log(quarantineNotePath(entry, true)); // "/s/quarantine/t-1.2026-12-01T10-00-00-000Z/quarantine-reason.txt"
 * console.log(quarantineNotePath(entry, false)); // "/s/quarantine/t-1.2026-12-01T10-00-00-000Z.reason.txt"
 * console.log(isQuarantineNote("t-1.2026-12-01T10-00-00-000Z.reason.txt")); // true
 * ```
 */
export function quarantinePath(root: string, name: string): string {
  return join(root, QUARANTINE, name);
}

/** The name of task `id` quarantined at `at`; see quarantinePath. */
export function quarantineName(id: string, at: Date): string {
  return `${id}.${at.toISOString().replace(/[:.]/g, "-")}`;
}

/** Where the reason of the quarantined `entry` is written; see quarantinePath. */
export function quarantineNotePath(entry: string, isDirectory: boolean): string {
  return isDirectory ? join(entry, "quarantine-reason.txt") : `${entry}${SIDE_NOTE}`;
}

/** Whether a name in `quarantine/` is the note beside another entry, not an entry; see quarantinePath. */
export function isQuarantineNote(name: string): boolean {
  return name.endsWith(SIDE_NOTE);
}

/**
 * Where a removed entry waits in `removing/` until it is deleted; `tag` is the removal's own.
 *
 * @example
 * ```ts
 * import { removingPath } from "./layout.ts";
 * console.log(removingPath("/s", "t-1", "ab12")); // "/s/removing/t-1.ab12"
 * ```
 */
export function removingPath(root: string, name: string, tag: string): string {
  return join(root, REMOVING, `${name}.${tag}`);
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
  /**
   * Made (empty) by the wrapper the moment its command ended, before it waits
   * for its watchdog and writes the exit code: its file time dates the end.
   * Absent for wrappers before it, or where it could not be made.
   */
  ended: string;
  /** Written by the wrapper just before it `exec`s the command: the command's own pid (a PTY task's is in `pty/info`). */
  commandPid: string;
  /**
   * Made (empty) by the wrapper, before its exit code, when it got SIGTERM
   * while `systemctl is-system-running` said `stopping`: the host's shutdown
   * ended the task, not a kill of outlive's or someone else's. The wrapper
   * derives the name from the `timedOut` path it is given.
   */
  hostStopping: string;
  /**
   * Written by outlive-shim, before its exit code, when it got SIGTERM from
   * outside and asked whether the host was stopping, and had no answer in
   * time (its `host_ask_ms`): one line saying so. The end's reason says the
   * question went unanswered, neither that the host was stopping nor not.
   */
  hostUnanswered: string;
  /**
   * Made (empty) by the supervisor just before the first signal of its kill,
   * after the `killing` record: a TERM that finds it is the supervisor's
   * kill, whose record already says how the task ends, so the shim and the
   * wrapper do not ask the host whether it is stopping (an answer that could
   * outlast the kill's grace). Absent for kills before it.
   */
  killAsked: string;
  /** A task under a restart policy: one JSON line per attempt's start and end, appended by the shim. */
  attempts: string;
  /** A task with a pids limit: its cgroup's `pids.events`, copied by the shim as it ended. */
  pidsEvents: string;
  /** A task with a CPU limit: its cgroup's `cpu.stat`, copied by the shim as it ended. */
  cpuStat: string;
  /**
   * Written by outlive-shim (temp + rename) when it refused to start the
   * task (exit 125, no exit code, nothing run): its one line saying why.
   */
  shimRefused: string;
}

/**
 * Where the files of task `id` live under the storage `root`. Pure: nothing is read or made.
 *
 * @example
 * ```ts
 * import { taskPaths } from "./layout.ts";
 * const paths = taskPaths("/srv/outlive", "t-1");
 * console.log(paths.record, paths.exit); // "/srv/outlive/tasks/t-1/record.json" "/srv/outlive/tasks/t-1/io/exit"
 * ```
 */
export function taskPaths(root: string, id: string): TaskPaths {
  const dir = join(root, TASKS, id);
  // What join(dir, name) gives for a plain name under a path join made, without normalizing it again:
  // one join instead of seven, a tenth of the time (replay and every write ask for these).
  const inDir = dir === "." || dir === "./" ? "" : dir.endsWith("/") ? dir : `${dir}/`;
  const io = `${inDir}io`;
  return {
    dir,
    record: `${inDir}record.json`,
    io,
    stdout: `${io}/stdout`,
    stderr: `${io}/stderr`,
    exit: `${io}/exit`,
    timedOut: `${io}/timed-out`,
    ended: `${io}/ended`,
    commandPid: `${io}/command-pid`,
    hostStopping: `${io}/host-stopping`,
    hostUnanswered: `${io}/host-unanswered`,
    killAsked: `${io}/kill-asked`,
    attempts: `${io}/attempts`,
    pidsEvents: `${io}/pids.events`,
    cpuStat: `${io}/cpu.stat`,
    shimRefused: `${io}/shim-refused`,
  };
}

/**
 * The file made at the spawn in the place of `io/timed-out`, so the
 * watchdog can still mark a deadline on a full disk (it renames this one into
 * place). The wrapper derives the same name from the `timedOut` path it is given.
 *
 * @example
 * ```ts
 * import { taskPaths, timedOutReservePath } from "./layout.ts";
 * console.log(timedOutReservePath(taskPaths("/s", "t-1"))); // "/s/tasks/t-1/io/timed-out.reserved"
 * ```
 */
export function timedOutReservePath(paths: TaskPaths): string {
  return `${paths.timedOut}.reserved`;
}

/**
 * The marker the output trimmer keeps beside a stream's file (`io/stdout`,
 * `io/stderr`): how many bytes at its head were dropped. The trimmer's
 * script derives the same name from the io directory it is given.
 *
 * @example
 * ```ts
 * import { droppedMarkerPath, taskPaths } from "./layout.ts";
 * console.log(droppedMarkerPath(taskPaths("/s", "t-1").stdout)); // "/s/tasks/t-1/io/stdout.dropped"
 * ```
 */
export function droppedMarkerPath(streamFile: string): string {
  return `${streamFile}.dropped`;
}

/** Where a PTY task's terminal is reached: `<task dir>/pty/`, 0700. */
export interface PtyPaths {
  dir: string;
  /** The FIFO that carries input to the terminal. */
  input: string;
  /** `PID TTY` of the terminal's session leader, written once the terminal is up and sized. */
  info: string;
}

/**
 * The FIFO and the info file of the terminal of the task whose directory
 * is `taskDir`. The holder's script derives the same names from the `pty/`
 * directory it is given.
 *
 * @example
 * ```ts
 * import { taskPtyPaths } from "./layout.ts";
 * console.log(taskPtyPaths("/s/tasks/t-1").info); // "/s/tasks/t-1/pty/info"
 * ```
 */
export function taskPtyPaths(taskDir: string): PtyPaths {
  const dir = join(taskDir, "pty");
  return { dir, input: join(dir, "in"), info: join(dir, "info") };
}

/**
 * A launched harness's launch record, beside `record.json` in its task's
 * directory, so it is the task's as long as the task is kept.
 *
 * @example
 * ```ts
 * import { taskLaunchRecordPath } from "./layout.ts";
 * console.log(taskLaunchRecordPath("/s/tasks/t-1")); // "/s/tasks/t-1/launch-record.json"
 * ```
 */
export function taskLaunchRecordPath(taskDir: string): string {
  return join(taskDir, "launch-record.json");
}

/**
 * The per-task reserves an older outlive made in a live task's directory,
 * by the kind of write each is for (see ReservePool): used on a full disk,
 * removed at the task's end.
 *
 * @example
 * ```ts
 * import { legacyReservePaths } from "./layout.ts";
 * console.log(legacyReservePaths("/s/tasks/t-1").terminal); // ["/s/tasks/t-1/.record.reserve"]
 * ```
 */
export function legacyReservePaths(taskDir: string): { terminal: string[]; live: string[] } {
  return {
    terminal: [join(taskDir, ".record.reserve")],
    live: [join(taskDir, ".record.reserve-live-1"), join(taskDir, ".record.reserve-live-2")],
  };
}
