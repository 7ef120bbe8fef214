import { OutliveError } from "../errors.ts";
import { waitUntil } from "../kill/process-group.ts";
import { inspectPid } from "../proc/identity.ts";
import { isTerminal, type TaskRecord } from "../store/record/record.ts";
import { type PtyPaths, ptyPaths } from "./holder.ts";
import { readPtyInfo } from "./terminal.ts";

/**
 * The terminal of a task, if it may be reached now: a PTY task that has not
 * ended. Pure apart from naming paths; the caller does the I/O.
 *
 * @example
 * ```ts
 * import { terminalOf } from "./task-terminal.ts";
 * try { terminalOf({ id: "t-1", pty: null, state: "running", exitCode: null } as never, "/s/tasks/t-1"); }
 * catch (e) { console.log((e as { code: string }).code); } // "E_NOT_PTY"
 * ```
 */
export function terminalOf(record: TaskRecord, taskDir: string): PtyPaths {
  if (!record.pty) {
    throw new OutliveError("E_NOT_PTY", `Task ${record.id} has no terminal (it was not started with \`pty\`); nothing was sent`);
  }
  if (isTerminal(record.state)) {
    const how = record.exitCode === null ? record.state : `${record.state}, code ${record.exitCode}`;
    throw new OutliveError("E_PTY_CLOSED", `Task ${record.id} has ended (${how}); its terminal is closed`);
  }
  return ptyPaths(taskDir);
}

/**
 * Waits (bounded) until a new PTY task's terminal is up and sized, or its
 * wrapper is gone: from then on input and resizes reach it.
 */
export async function awaitTerminal(paths: PtyPaths, wrapperPid: number, timeoutMs: number): Promise<boolean> {
  await waitUntil(() => readPtyInfo(paths) !== null || inspectPid(wrapperPid) === null, timeoutMs, 5);
  return readPtyInfo(paths) !== null;
}
