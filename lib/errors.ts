/** Codes a caller can switch on. */
export type OutliveErrorCode =
  | "E_BAD_OPTION"
  | "E_BAD_ID"
  | "E_STORAGE"
  | "E_STORAGE_LOCKED"
  | "E_NO_TASK"
  | "E_TASK_LIVE"
  | "E_CORRUPT_RECORD"
  | "E_NEWER_SCHEMA"
  | "E_PLACEMENT_UNAVAILABLE"
  | "E_SPAWN"
  /** An argv task's program is not on the task's PATH, or its path does not exist (the CLI's `run` exits 127). */
  | "E_NOT_FOUND"
  /** An argv task's program exists but cannot be run: no execute permission, a directory (the CLI's `run` exits 126). */
  | "E_NOT_EXECUTABLE"
  | "E_MEMORY_CAP_UNSUPPORTED"
  /** A CPU or pids limit the placement cannot enforce here (the controller is missing, or a process group has no cgroup). */
  | "E_LIMIT_UNSUPPORTED"
  /** A restart policy where tasks run under the shell wrapper: only outlive-shim carries one out. */
  | "E_RESTART_UNSUPPORTED"
  /** A wait for readiness ended without it: the task ended first, or its ready timeout passed (the task runs on). */
  | "E_NOT_READY"
  | "E_CLOSED"
  | "E_NOT_PTY"
  | "E_PTY_CLOSED"
  | "E_PTY_UNSAFE"
  | "E_CONTROL"
  /** A supervisor opened `readOnly` was asked to write. */
  | "E_READ_ONLY";

/**
 * Every error outlive throws on purpose: a `code` to switch on, a message a person can act on.
 * The generation table's errors are its subclass `GenerationError`, with codes of their own.
 *
 * @example
 * ```ts
 * import { OutliveError } from "./errors.ts";
 * import { checkTaskId } from "./store/record/task-id.ts";
 * try {
 *   checkTaskId("../etc");
 * } catch (error) {
 *   if (!(error instanceof OutliveError) || error.code !== "E_BAD_ID") throw error;
 *   console.log(error.code, error.message); // "E_BAD_ID" "Expected the task id to match ..."
 * }
 * ```
 */
export class OutliveError<Code extends string = OutliveErrorCode> extends Error {
  readonly code: Code;
  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "OutliveError";
    this.code = code;
  }
}

/** `-1` (number), `"x"` (string): the value and its type, for error messages. */
export function describeValue(value: unknown): string {
  let shown: string;
  try {
    shown = typeof value === "string" ? JSON.stringify(value) : String(JSON.stringify(value) ?? value);
  } catch {
    shown = String(value);
  }
  if (shown.length > 80) shown = `${shown.slice(0, 77)}...`;
  return `\`${shown}\` (${value === null ? "null" : Array.isArray(value) ? "array" : typeof value})`;
}
