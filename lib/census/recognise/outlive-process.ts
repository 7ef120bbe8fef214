import { HOLDER_NAME } from "../../pty/holder.ts";
import { isShimArgv } from "../../spawn/command-pid.ts";
import { WRAPPER_NAME } from "../../spawn/wrapper.ts";

/** What one of outlive's own processes in a task is. */
export interface OutliveProcess {
  /**
   * `shim`: outlive-shim, the task's group leader, which runs the command,
   * keeps its deadline, output bound and terminal, and writes its exit code;
   * or, where there is no shim, `wrapper`: the shell wrapper in its place;
   * `warden`: the wrapper's fork that keeps the deadline and the output
   * bound; `pty holder`: the shell that keeps a PTY task's terminal; `pty
   * terminal`: util-linux `script`, the terminal's master end.
   */
  role: "shim" | "wrapper" | "warden" | "pty holder" | "pty terminal";
  /** The task it serves, read from the paths in its argv; null when they do not say. */
  taskId: string | null;
}

/** The parts of a process this needs: any census or snapshot process has them. */
export interface ProcessShape {
  pid: number;
  pgid: number;
  argv: readonly string[];
}

const TASK_OF_PATH = /\/tasks\/([a-z0-9][a-z0-9-]{0,62})\/(?:io|pty)(?:\/|$)/;

/**
 * Whether `p` is one of outlive's own processes in a task, and which: told
 * by the shim's name (`outlive-shim ID`) or the `$0` the wrapper and the
 * holder run under (`outlive-task`, `outlive-pty`), never by the script
 * text, which changes between versions.
 * The warden is a fork of the wrapper with the very same argv: it is the one
 * whose parent has that argv too (without the parent at hand, the one that
 * does not lead its group). Pure.
 *
 * @example
 * ```ts
 * import { outliveProcess } from "./outlive-process.ts";
 * const argv = ["/bin/sh", "-c", "…", "outlive-task", "", "60", "2.000", "/s/tasks/t-1/io/timed-out", "", "0", "", "argv", "sleep", "600"];
 * const wrapper = { pid: 5, pgid: 5, argv };
 * console.log(outliveProcess(wrapper)); // { role: "wrapper", taskId: "t-1" }
 * console.log(outliveProcess({ pid: 6, pgid: 5, argv }, wrapper)); // { role: "warden", taskId: "t-1" }
 * console.log(outliveProcess({ pid: 7, pgid: 5, argv: ["sleep", "600"] })); // null
 * console.log(outliveProcess({ pid: 8, pgid: 8, argv: ["outlive-shim", "t-2"] })); // { role: "shim", taskId: "t-2" }
 * ```
 */
export function outliveProcess(p: ProcessShape, parent?: ProcessShape): OutliveProcess | null {
  const { argv } = p;
  // The shim's fork before it execs the command has the shim's argv too: it is the one that does not lead its
  // group, and it is taken for what it is about to become, the command (real work: the census fails closed).
  if (isShimArgv(argv)) return p.pid === p.pgid ? { role: "shim", taskId: argv[1] } : null;
  if (argv.length >= 4 && argv[1] === "-c" && argv[3] === WRAPPER_NAME) {
    const forked = parent ? sameArgv(parent.argv, argv) : p.pid !== p.pgid;
    // $7 of every wrapper so far: the task's io/timed-out.
    return { role: forked ? "warden" : "wrapper", taskId: taskOf(argv[7]) };
  }
  if (argv.length >= 5 && argv[1] === "-c" && argv[3] === HOLDER_NAME) return { role: "pty holder", taskId: taskOf(argv[4]) };
  // The holder's `script -qefc CHILD`: CHILD is the terminal's first words, which name the task's pty/info.
  if (argv.length >= 3 && /(^|\/)script$/.test(argv[0]) && argv[1] === "-qefc" && argv[2].startsWith("t=$(tty)")) {
    return { role: "pty terminal", taskId: taskOf(argv[2]) };
  }
  return null;
}

/**
 * The one short line a person reads for one of outlive's processes, in place
 * of its script: `outlive wrapper of task t-1`.
 *
 * @example
 * ```ts
 * import { outliveProcessTitle } from "./outlive-process.ts";
 * console.log(outliveProcessTitle({ role: "warden", taskId: "t-1" })); // "outlive warden of task t-1"
 * ```
 */
export function outliveProcessTitle(o: OutliveProcess): string {
  return `outlive ${o.role} of ${o.taskId === null ? "a task" : `task ${o.taskId}`}`;
}

function taskOf(text: string | undefined): string | null {
  return text === undefined ? null : TASK_OF_PATH.exec(text)?.[1] ?? null;
}

function sameArgv(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
