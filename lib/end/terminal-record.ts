import type { OutputSummary } from "../observe/output-tail.ts";
import { type FinishedAtSource, schemaVersionFor, type TaskRecord, type TaskState } from "../store/record/record.ts";

/** How a task ended: what a terminal record says. */
export interface TaskEnd {
  state: TaskState;
  exitCode: number | null;
  reason: string;
  /** When it ended (ISO), from the evidence `finishedAtSource` names. Without it, the moment the end is recorded, as `seen-gone`. */
  finishedAt?: string;
  finishedAtSource?: FinishedAtSource;
  /** The last moment it was known alive, for an end only noticed later. */
  endedAfter?: string | null;
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
 * console.log(done.state, done.exitCode, done.finishedAt, done.finishedAtSource); // "exited" 3 "1970-01-01T00:00:00.000Z" "seen-gone"
 * ```
 */
export function terminalRecord(current: TaskRecord, end: TaskEnd, output: OutputSummary, reasonTail: string, now: Date): TaskRecord {
  const started = current.startedAt === null ? NaN : Date.parse(current.startedAt);
  // Never before the start: a marker's file time is the kernel's coarse clock (up to a tick early), so a task
  // shorter than a tick can read as ending before it began.
  const evidence = end.finishedAt ?? now.toISOString();
  const finishedAt = !Number.isNaN(started) && Date.parse(evidence) < started ? current.startedAt! : evidence;
  return {
    ...current,
    schemaVersion: Math.max(current.schemaVersion, schemaVersionFor(end.state)),
    state: end.state,
    exitCode: end.exitCode,
    reason: `${end.reason}${reasonTail}`,
    finishedAt,
    finishedAtSource: end.finishedAtSource ?? "seen-gone",
    endedAfter: end.endedAfter ?? null,
    // Never negative, as above.
    durationMs: Number.isNaN(started) ? null : Math.max(0, Date.parse(finishedAt) - started),
    lastOutputAt: output.lastOutputAt,
    outputTail: output.tail,
    outputBytes: { stdout: output.stdoutBytes, stderr: output.stderrBytes },
  };
}
