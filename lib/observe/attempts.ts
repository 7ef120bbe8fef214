import { readFileSync } from "node:fs";

/** One line of `io/attempts` (outlive-shim's restart policy): an attempt's start or end. */
export type AttemptLine =
  | { attempt: number; event: "start"; at: number; pid: number; stdout: number; stderr: number }
  | { attempt: number; event: "end"; at: number; code: number };

/** What a task's attempts say: how many restarts, and where the last attempt stands. */
export interface AttemptsSummary {
  /** Attempts started after the first. */
  restarts: number;
  /** The command's pid in the newest attempt; null before the first. */
  commandPid: number | null;
  /** The newest attempt ended and the next has not started: the policy waits out a delay (or the task is over). */
  between: boolean;
  /** When the newest attempt started (epoch ms), or null. */
  lastStartAt: number | null;
}

/**
 * Sums up the text of `io/attempts`; a line cut short by a crash (the last
 * one, without its newline) or that does not parse is passed over. Pure.
 *
 * @example
 * ```ts
 * import { summarizeAttempts } from "./attempts.ts";
 * const text = '{"attempt":1,"event":"start","at":1,"pid":10,"stdout":0,"stderr":0}\n{"attempt":1,"event":"end","at":5,"code":1}\n' +
 *   '{"attempt":2,"event":"start","at":205,"pid":11,"stdout":8,"stderr":0}\n';
 * console.log(summarizeAttempts(text)); // { restarts: 1, commandPid: 11, between: false, lastStartAt: 205 }
 * ```
 */
export function summarizeAttempts(text: string): AttemptsSummary {
  let starts = 0;
  let commandPid: number | null = null;
  let between = false;
  let lastStartAt: number | null = null;
  for (const line of text.split("\n")) {
    if (line === "") continue;
    let a: AttemptLine;
    try {
      a = JSON.parse(line) as AttemptLine;
    } catch {
      continue;
    }
    if (a.event === "start" && Number.isSafeInteger(a.pid)) {
      starts++;
      commandPid = a.pid;
      lastStartAt = a.at;
      between = false;
    } else if (a.event === "end") {
      between = true;
    }
  }
  return { restarts: Math.max(0, starts - 1), commandPid, between, lastStartAt };
}

/** `summarizeAttempts` of the file at `path`; null when there is none (yet). */
export function readAttempts(path: string): AttemptsSummary | null {
  try {
    return summarizeAttempts(readFileSync(path, "utf8"));
  } catch {
    return null;
  }
}
