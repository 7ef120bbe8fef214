/**
 * Why the census could not answer, or why a config source added nothing.
 * A caller switches on `code`; `message` tells a person what to look at.
 */
export interface CensusError {
  code: CensusErrorCode;
  message: string;
}

export type CensusErrorCode =
  // The process list
  | "snapshot-incomplete"
  | "snapshot-failed"
  // The leader
  | "leader-missing"
  | "leader-zombie"
  | "leader-identity-changed"
  | "leader-identity-unverifiable"
  // The cgroup source
  | "cgroup-unreadable"
  // The launch record
  | "launch-record-unknown"
  // Config sources (they only ever add nothing; they never stop the census)
  | "config-missing"
  | "config-unreadable"
  | "config-not-a-file"
  | "config-too-large"
  | "config-symlink-loop"
  | "config-unparsable"
  | "config-wrong-type"
  | "config-timeout"
  | "server-invalid"
  | "server-disabled"
  | "server-remote"
  // The refusal log
  | "refusal-log-unwritable";

/**
 * Makes a census error value.
 *
 * @example
 * ```ts
 * import { censusError } from "./census-error.ts";
 * console.log(censusError("leader-missing", "pid 42 is gone").code); // "leader-missing"
 * ```
 */
export function censusError(code: CensusErrorCode, message: string): CensusError {
  return { code, message };
}

/** The errno-style code of a thrown value, for messages and decisions. */
export function errnoCode(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" ? code : "UNKNOWN";
}

/** A one-line description of a thrown value that never throws itself. */
export function describeThrown(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    return String(error);
  } catch {
    return "unprintable error";
  }
}
