import { existsSync, readFileSync } from "node:fs";

/** The fields of `/proc/<pid>/stat` that outlive relies on. */
export interface ProcStat {
  pid: number;
  /** The command name between the parentheses (may itself hold `)` or spaces). */
  comm: string;
  /** One letter: R, S, D, Z, T, t, X, I, … */
  state: string;
  ppid: number;
  pgid: number;
  sid: number;
  /** Field 22: start time in clock ticks since boot. A pid plus this is a process identity. */
  startTime: string;
}

/**
 * Parses the text of `/proc/<pid>/stat`. The command name may contain spaces
 * and parentheses, so the fields are split after the LAST `)`.
 * Returns null for text that is not a stat line.
 *
 * @example
 * ```ts
 * import { parseProcStat } from "./stat.ts";
 * const s = parseProcStat("42 (a) b) S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0");
 * console.log(s?.comm, s?.startTime); // "a) b" "777"
 * ```
 */
export function parseProcStat(text: string): ProcStat | null {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 1 || close < open) return null;
  const pid = Number(text.slice(0, open).trim());
  // After ") " come the fields from 3 (state) onwards.
  const rest = text.slice(close + 2).trim().split(" ");
  if (!Number.isInteger(pid) || rest.length < 20) return null;
  const [state, ppid, pgid, sid] = [rest[0], Number(rest[1]), Number(rest[2]), Number(rest[3])];
  const startTime = rest[19];
  if (!/^[A-Za-z]$/.test(state) || ![ppid, pgid, sid].every(Number.isInteger) || !/^\d+$/.test(startTime)) {
    return null;
  }
  return { pid, comm: text.slice(open + 1, close), state, ppid, pgid, sid, startTime };
}

/**
 * Reads `/proc/<pid>/stat`. Returns null when the process does not exist
 * (it may have ended a moment ago); throws on any other failure, so a caller
 * that must fail closed can tell "gone" from "unreadable".
 *
 * @example
 * ```ts
 * import { readProcStat } from "./stat.ts";
 * const me = readProcStat(process.pid)!;
 * console.log(me.pid === process.pid, me.startTime); // true "123456" (clock ticks after boot)
 * console.log(readProcStat(4194305)); // null: above the largest possible pid
 * ```
 */
export function readProcStat(pid: number, procRoot = "/proc"): ProcStat | null {
  // Replay asks about thousands of long-gone pids; answering those without an exception is much cheaper.
  if (!existsSync(`${procRoot}/${pid}`)) return null;
  let text: string;
  try {
    text = readFileSync(`${procRoot}/${pid}/stat`, "latin1");
  } catch (error) {
    if (isGone(error)) return null;
    throw error;
  }
  const parsed = parseProcStat(text);
  if (!parsed) throw new Error(`${procRoot}/${pid}/stat could not be parsed: ${JSON.stringify(text.slice(0, 200))}`);
  return parsed;
}

/**
 * ENOENT and ESRCH both mean the process ended while we looked.
 *
 * @example
 * ```ts
 * import { existsSync, readFileSync } from "node:fs";
 * import { isGone } from "./stat.ts";
 * try {
 *   readFileSync("/proc/4194305/stat");
 * } catch (error) {
 *   console.log(isGone(error)); // true
 * }
 * ```
 */
export function isGone(error: unknown): boolean {
  const code = (error as { code?: string })?.code;
  return code === "ENOENT" || code === "ESRCH";
}
