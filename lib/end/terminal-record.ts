import type { OutputSummary } from "../observe/output-tail.ts";
import type { TaskRecord, TaskState } from "../store/record.ts";

/** How a task ended: what a terminal record says. */
export interface TaskEnd {
  state: TaskState;
  exitCode: number | null;
  reason: string;
}

/**
 * The terminal record of a task that ended as `end` says, with its output
 * summary; `reasonTail` is added to the reason (a full disk's words). Pure.
 *
 * @example
 * ```ts
 * import { terminalRecord } from "./terminal-record.ts";
 * const running = { id: "t-1", state: "running" } as never;
 * const output = { lastOutputAt: null, tail: "", stdoutBytes: 0, stderrBytes: 0 };
 * const done = terminalRecord(running, { state: "exited", exitCode: 3, reason: "exited with code 3" }, output, "", new Date(0));
 * console.log(done.state, done.exitCode, done.finishedAt); // "exited" 3 "1970-01-01T00:00:00.000Z"
 * ```
 */
export function terminalRecord(current: TaskRecord, end: TaskEnd, output: OutputSummary, reasonTail: string, now: Date): TaskRecord {
  return {
    ...current,
    state: end.state,
    exitCode: end.exitCode,
    reason: `${end.reason}${reasonTail}`,
    finishedAt: now.toISOString(),
    lastOutputAt: output.lastOutputAt,
    outputTail: output.tail,
    outputBytes: { stdout: output.stdoutBytes, stderr: output.stderrBytes },
  };
}
