import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { waitUntil } from "../kill/process-group.ts";
import { inspectPid } from "../proc/identity.ts";
import { ptyPaths } from "../pty/holder.ts";
import { readPtyInfo } from "../pty/terminal.ts";
import type { TaskPaths } from "../store/layout.ts";
import type { TaskRecord } from "../store/record/record.ts";
import { SHIM_NAME } from "./task-program.ts";
import { WRAPPER_NAME } from "./wrapper.ts";

/**
 * The pid in an `io/command-pid` file's text, or null while it is not (yet)
 * a whole line: the wrapper writes it with one `echo`. Pure.
 *
 * @example
 * ```ts
 * import { parseCommandPid } from "./command-pid.ts";
 * console.log(parseCommandPid("4242\n"), parseCommandPid("42"), parseCommandPid("")); // 4242 null null
 * ```
 */
export function parseCommandPid(text: string): number | null {
  const m = /^([1-9]\d{0,9})\n$/.exec(text);
  return m && Number.isSafeInteger(Number(m[1])) ? Number(m[1]) : null;
}

/**
 * The pid of the user's command itself, as far as its task's directory says
 * now: `io/command-pid` (written by the wrapper just before it `exec`s the
 * command), or a PTY task's `pty/info` (the terminal's session leader,
 * which `exec`s the command). Null while it is not written. Never follows a
 * symlink or blocks on a FIFO planted there.
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { Supervisor } from "../supervisor/supervisor.ts";
 * import { taskPaths } from "../store/layout.ts";
 * import { readCommandPid } from "./command-pid.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-cmdpid-"));
 * const sup = await Supervisor.open({ storage, log: () => {} });
 * const task = await sup.run({ argv: ["sleep", "30"] });
 * console.log(readCommandPid(task, taskPaths(storage, task.id)) === task.commandPid); // true
 * await sup.kill(task.id);
 * await sup.close();
 * rmSync(storage, { recursive: true });
 * ```
 */
export function readCommandPid(record: Pick<TaskRecord, "pty">, paths: TaskPaths): number | null {
  if (record.pty) return readPtyInfo(ptyPaths(paths.dir))?.pid ?? null;
  let fd: number;
  try {
    fd = openSync(paths.commandPid, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const info = fstatSync(fd);
    return info.isFile() && info.size <= 16 ? parseCommandPid(readFileSync(fd, "latin1")) : null;
  } finally {
    closeSync(fd);
  }
}

/**
 * Waits (bounded) until the command's pid is written and that process runs
 * the command (it has `exec`ed: /proc shows the user's argv from then on), or
 * the task's wrapper is gone, and returns the pid (null when it never came).
 * The wrapper writes it within a fork of its start; a PTY task's terminal
 * takes longer (script, setsid, its shell).
 */
export async function awaitCommandPid(record: TaskRecord, paths: TaskPaths, timeoutMs: number): Promise<number | null> {
  const wrapperGone = () => {
    const live = inspectPid(record.pid!);
    return !live || live.startTime !== record.startTime;
  };
  const ready = () => {
    const pid = readCommandPid(record, paths);
    return pid !== null && !beforeExec(pid);
  };
  await waitUntil(() => ready() || wrapperGone(), timeoutMs, 2);
  return readCommandPid(record, paths);
}

/**
 * True while `pid` still runs outlive's own code on the way to the command:
 * the shim's fork (its argv is the shim's), the wrapper's subshell (`$0` is
 * WRAPPER_NAME) or a PTY terminal's first words (`t=$(tty) …`). False once
 * it has `exec`ed, or is gone.
 */
function beforeExec(pid: number): boolean {
  let argv: string[];
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0");
  } catch {
    return false;
  }
  if (isShimArgv(argv)) return true;
  return argv[1] === "-c" && (argv[3] === WRAPPER_NAME || (argv[2] ?? "").startsWith("t=$(tty)"));
}

/**
 * Whether a process's argv (`/proc/PID/cmdline` split at NUL, which leaves an
 * empty last element) is outlive-shim's: `outlive-shim ID`, argv[0] its name
 * or a path ending in it. Pure.
 *
 * @example
 * ```ts
 * import { isShimArgv } from "./command-pid.ts";
 * console.log(isShimArgv(["outlive-shim", "t-1", ""]), isShimArgv(["/opt/x/outlive-shim", "t-1"]), isShimArgv(["sleep", "9"])); // true true false
 * ```
 */
export function isShimArgv(argv: readonly string[]): boolean {
  const words = argv.length > 0 && argv[argv.length - 1] === "" ? argv.slice(0, -1) : argv;
  return words.length === 2 && (words[0] === SHIM_NAME || words[0].endsWith(`/${SHIM_NAME}`)) && words[1] !== "";
}
