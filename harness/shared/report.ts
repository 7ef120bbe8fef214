/**
 * What a scenario run leaves behind, as plain data: the driver writes a
 * `DriverReport` inside the container, the host adds the verdict and the
 * container facts and writes `report.json` and `timeline.svg`.
 */

/**
 * `reproduced`: a scenario that declares an open bug (`bug: "…"`) saw it
 * happen (a check failed, nothing threw). Like `pass`, it is the outcome
 * its author expects, so it exits 0.
 */
export type Verdict = "pass" | "fail" | "skip" | "reproduced";

export const EXIT_CODES: Record<Verdict, number> = { pass: 0, reproduced: 0, fail: 1, skip: 77 };

/**
 * The files of a scenario's run directory through which the driver asks the
 * host for a reboot (`ctx.reboot()`): first what the steps found so far (a
 * DriverReport and the completions delivered), then the request itself, whose
 * content is the scenario's `reboot.how`.
 */
export const REBOOT_FILES = { before: "driver-report-before-reboot.json", request: "reboot-request" } as const;

/** The param (`ctx.params`) the steps after a reboot get: ms from the host seeing the request to sending the reset or reboot. */
export const REBOOT_SENT_AFTER_PARAM = "reboot-sent-after-ms";

/** The param the steps after a reboot get: how many reboots the machine has had under the scenario so far (1 after the first). */
export const REBOOT_COUNT_PARAM = "reboots";

export interface Check {
  name: string;
  ok: boolean;
  /** What was seen, for a person reading a failure. */
  detail?: unknown;
}

/** Every task, as its storage says at the end, plus what the daemon received. */
export interface TaskFacts {
  id: string;
  storage: string;
  placement: string;
  /** The terminal state, or the state it was left in. */
  fate: string;
  exitCode: number | null;
  reason: string | null;
  unit: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  stdoutBytes: number;
  stderrBytes: number;
  /** How many times a module delivered its completion to the daemon, over all incarnations. */
  completionsDelivered: number;
}

/** One module process: a band on the timeline. */
export interface Incarnation {
  daemon: string;
  pid: number;
  runtime: string;
  placement: string;
  startedAt: string;
  endedAt: string | null;
  /** How it ended: drained, killed with its cgroup, hung up… */
  end: string | null;
}

/** A moment on the timeline: a restart, a cgroup kill, a task kill, a check. */
export interface Mark {
  at: string;
  kind: string;
  label: string;
}

export interface DriverReport {
  scenario: string;
  /** Judged once, by the driver (`judge`); the host only reads it. */
  verdict: Verdict;
  /** The judgement's one line: the skip reason, the error, the failed check, or why a reproduction failed; null on a pass. */
  why: string | null;
  /** The open bug the scenario shows, when it declares one. */
  bug?: string | null;
  /** What ran the scenario's code inside: `node v20.…` or `deno 2.…`. */
  runtime?: string;
  skipReason: string | null;
  /** An exception that ended the steps early (a failure). */
  error: string | null;
  startedAt: string;
  endedAt: string;
  checks: Check[];
  tasks: TaskFacts[];
  incarnations: Incarnation[];
  marks: Mark[];
  /** Free-form facts a scenario wants in the report (versions, timings). */
  facts: Record<string, unknown>;
  /** Storage directories the scenario used, as paths inside the container. */
  storages: string[];
  /** Units or cgroups the final cleanup still found and removed. */
  leftovers: string[];
}

export interface ScenarioReport extends DriverReport {
  suite: string;
  systemd: number | null;
  cgroupLayout: string;
  durationMs: number;
  /** Where things were kept on the host (failure: journal, storage). */
  kept: Record<string, string>;
}
