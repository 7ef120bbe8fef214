import { OutliveError } from "../errors.ts";

/**
 * When a task counts as ready: a line of its output matches `log`, one of
 * its own processes listens on TCP `port`, `http` answers 2xx or 3xx. Every
 * condition given must hold; `timeoutSeconds` after the task's start a
 * waiter is told it is not ready (the task runs on, and is still watched).
 */
export interface ReadySpec {
  /** A JavaScript regular expression, matched against each line of stdout and stderr (colour escapes taken out). */
  log: string | null;
  port: number | null;
  /** An http:// or https:// URL. */
  http: string | null;
  timeoutSeconds: number;
}

/** A task's readiness wait when its run spec names none. */
export const DEFAULT_READY_TIMEOUT_SECONDS = 60;

/** What dates `readyAt`: see the record's reference. */
export type ReadyAtSource = "line-seen" | "probe" | "probe-after-replay";

/**
 * Every `readyAtSource` a record can hold.
 *
 * @example
 * ```ts
 * import { READY_AT_SOURCES } from "./ready-spec.ts";
 * console.log(READY_AT_SOURCES.join(" ")); // "line-seen probe probe-after-replay"
 * ```
 */
export const READY_AT_SOURCES: readonly ReadyAtSource[] = ["line-seen", "probe", "probe-after-replay"];

/** The run spec's readiness fields, as given. */
export interface ReadyFields {
  readyLog?: string;
  readyPort?: number;
  readyHttp?: string;
  readyTimeoutSeconds?: number;
}

type Bad = (name: string, expected: string, value: unknown) => Error;

/**
 * Checks a run spec's readiness fields, naming the field on any problem;
 * null when it names no condition. Pure.
 *
 * @example
 * ```ts
 * import { checkReadySpec } from "./ready-spec.ts";
 * const bad = (name: string, expected: string, v: unknown) => new Error(`${name}: ${expected}, got ${String(v)}`);
 * console.log(checkReadySpec({ readyPort: 5173 }, bad)); // { log: null, port: 5173, http: null, timeoutSeconds: 60 }
 * try { checkReadySpec({ readyLog: "(" }, bad); } catch (e) { console.log((e as Error).message); } // "readyLog: a regular expression that compiles (...), got ("
 * ```
 */
export function checkReadySpec(spec: ReadyFields, bad: Bad): ReadySpec | null {
  const { readyLog: log, readyPort: port, readyHttp: http, readyTimeoutSeconds: timeout } = spec;
  if (log !== undefined) {
    if (typeof log !== "string" || log === "" || log.length > 1000) throw bad("readyLog", "a regular expression of 1 to 1000 characters", log);
    const problem = regexProblem(log);
    if (problem) throw bad("readyLog", `a regular expression that compiles (${problem})`, log);
  }
  if (port !== undefined && (!Number.isSafeInteger(port) || port < 1 || port > 65535)) throw bad("readyPort", "a TCP port, an integer from 1 to 65535", port);
  if (http !== undefined) {
    const problem = typeof http === "string" ? urlProblem(http) : "not a string";
    if (problem) throw bad("readyHttp", `an http:// or https:// URL (${problem})`, http);
  }
  const none = log === undefined && port === undefined && http === undefined;
  if (timeout !== undefined) {
    if (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout <= 0 || timeout > 86400) {
      throw bad("readyTimeoutSeconds", "a number of seconds > 0 and <= 86400", timeout);
    }
    if (none) throw bad("readyTimeoutSeconds", "given with readyLog, readyPort or readyHttp (there is nothing to wait for)", timeout);
  }
  if (none) return null;
  return { log: log ?? null, port: port ?? null, http: http ?? null, timeoutSeconds: timeout ?? DEFAULT_READY_TIMEOUT_SECONDS };
}

function regexProblem(source: string): string | null {
  try {
    new RegExp(source);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

function urlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "it does not parse";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return `its scheme is ${url.protocol.slice(0, -1)}`;
  return null;
}

/** Refuses a wait for readiness on a task that names no condition. */
export function noReadiness(id: string): OutliveError {
  return new OutliveError("E_BAD_OPTION", `Task ${id} names no readiness condition (readyLog, readyPort or readyHttp): there is nothing to wait for`);
}
