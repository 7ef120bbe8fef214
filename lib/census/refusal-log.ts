import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { censusError, describeThrown, type CensusError } from "./census-error.ts";
import type { IdleDecision } from "./decide/decision.ts";

/**
 * At most one refusal line per session in this many milliseconds.
 *
 * @example
 * ```ts
 * import { DEFAULT_REFUSAL_INTERVAL_MS } from "./refusal-log.ts";
 * console.log(DEFAULT_REFUSAL_INTERVAL_MS / 60_000); // 10 (minutes)
 * ```
 */
export const DEFAULT_REFUSAL_INTERVAL_MS = 10 * 60 * 1000;

/**
 * The one line that explains a refusal to end an idle session; null when
 * the decision was to retire.
 *
 * @example
 * ```ts
 * import { refusalLine } from "./refusal-log.ts";
 * const line = refusalLine("s1", { verdict: "keep", blocking: { pid: 7, argv: ["npm", "run", "dev"], name: "npm", why: "child-chain" } });
 * console.log(line); // 'outlive: idle session s1 kept up: pid 7 runs "npm run dev"'
 * ```
 */
export function refusalLine(sessionId: string, decision: IdleDecision): string | null {
  if (decision.verdict === "retire") return null;
  if (decision.blocking) {
    const { pid, argv, name } = decision.blocking;
    const command = argv.length > 0 ? argv.join(" ") : `[${name}]`;
    return `outlive: idle session ${sessionId} kept up: pid ${pid} runs ${JSON.stringify(command)}`;
  }
  return `outlive: idle session ${sessionId} kept up: what runs under it could not be listed (${decision.reason.code}: ${decision.reason.message})`;
}

/**
 * Whether a refusal may be logged now, given when the last one was. A
 * stored time in the future (the clock went back) does not silence the log.
 *
 * @example
 * ```ts
 * import { isRefusalDue } from "./refusal-log.ts";
 * console.log(isRefusalDue(null, 0), isRefusalDue(0, 60_000), isRefusalDue(0, 600_000)); // true false true
 * ```
 */
export function isRefusalDue(lastLoggedAt: number | null, now: number, intervalMs = DEFAULT_REFUSAL_INTERVAL_MS): boolean {
  return lastLoggedAt === null || now < lastLoggedAt || now - lastLoggedAt >= intervalMs;
}

export interface RefusalLogOptions {
  /** Folder for the per-session timestamp files (made if missing). */
  dir: string;
  sessionId: string;
  /** Default `Date.now()`. */
  now?: number;
  /** Default 10 minutes. */
  intervalMs?: number;
  /** Where the line goes; default `console.error`. */
  write?: (line: string) => void;
}

export interface RefusalLogResult {
  logged: boolean;
  line: string | null;
  /** Set when the timestamp could not be stored; the line is still written. */
  error?: CensusError;
}

/**
 * The file that holds one session's last refusal time.
 *
 * @example
 * ```ts
 * import { refusalStampPath } from "./refusal-log.ts";
 * console.log(refusalStampPath("/var/lib/outlive", "session/7")); // "/var/lib/outlive/idle-refusal-session%2F7.json"
 * ```
 */
export function refusalStampPath(dir: string, sessionId: string): string {
  return join(dir, `idle-refusal-${encodeURIComponent(sessionId)}.json`);
}

/**
 * Logs a refusal line for a kept session, unless one was logged for the
 * same session within the interval. The last time is a small JSON file, so
 * the limit holds across restarts and needs no timer.
 *
 * @example
 * ```ts
 * import { mkdtempSync } from "node:fs";
 * import { logRefusal } from "./refusal-log.ts";
 * const keep = { verdict: "keep" as const, blocking: { pid: 7, argv: ["vite"], name: "vite", why: "child-chain" as const } };
 * const dir = mkdtempSync("/tmp/outlive-refusals-");
 * console.log((await logRefusal(keep, { dir, sessionId: "s1", now: 0, write: () => {} })).logged); // true
 * console.log((await logRefusal(keep, { dir, sessionId: "s1", now: 1_000, write: () => {} })).logged); // false
 * ```
 */
export async function logRefusal(decision: IdleDecision, options: RefusalLogOptions): Promise<RefusalLogResult> {
  const line = refusalLine(options.sessionId, decision);
  if (line === null) return { logged: false, line: null };
  const now = options.now ?? Date.now();
  const path = refusalStampPath(options.dir, options.sessionId);
  if (!isRefusalDue(await readStamp(path), now, options.intervalMs)) return { logged: false, line };
  (options.write ?? console.error)(line);
  try {
    await mkdir(options.dir, { recursive: true });
    const temp = `${path}.${process.pid}.tmp`;
    await writeFile(temp, JSON.stringify({ sessionId: options.sessionId, lastLoggedAt: now }) + "\n");
    await rename(temp, path);
    return { logged: true, line };
  } catch (error) {
    const message = `the refusal time for session ${options.sessionId} could not be stored in ${options.dir} (${describeThrown(error)}); the next refusal will be logged again`;
    return { logged: true, line, error: censusError("refusal-log-unwritable", message) };
  }
}

/** The stored time, or null when there is none or it cannot be read (then log, rather than stay silent). */
async function readStamp(path: string): Promise<number | null> {
  try {
    const value = JSON.parse(await readFile(path, "utf8")) as { lastLoggedAt?: unknown };
    return typeof value?.lastLoggedAt === "number" && Number.isFinite(value.lastLoggedAt) ? value.lastLoggedAt : null;
  } catch {
    return null;
  }
}
