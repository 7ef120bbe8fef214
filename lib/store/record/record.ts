import type { LimitEvents } from "../../limits/limits.ts";
import type { ReadyAtSource, ReadySpec } from "../../ready/ready-spec.ts";
import type { RestartPolicy } from "../../start/restart-policy.ts";

/**
 * The newest schema version this build reads and writes. A record with a
 * newer one is never overwritten. Each record is written in the oldest
 * schema that holds it (`schemaVersionFor`), so an older outlive still reads
 * every record it can understand.
 *
 * @example
 * ```ts
 * import { SCHEMA_VERSION } from "./record.ts";
 * console.log(SCHEMA_VERSION); // 2
 * ```
 */
export const SCHEMA_VERSION = 2;

/**
 * The schema a record in `state` is written in: 2 for `never_started`
 * (which an outlive before it does not know: it leaves such a record
 * untouched, as written by a newer one, instead of calling it corrupt), else 1.
 *
 * @example
 * ```ts
 * import { schemaVersionFor } from "./record.ts";
 * console.log(schemaVersionFor("running"), schemaVersionFor("never_started")); // 1 2
 * ```
 */
export function schemaVersionFor(state: TaskState): number {
  return state === "never_started" ? 2 : 1;
}

export type TaskState =
  | "starting"
  | "running"
  | "killing"
  | "exited"
  | "killed"
  | "timed_out"
  | "oom_killed"
  | "lost"
  | "never_started";

/**
 * The states a task never leaves once it is in one.
 *
 * @example
 * ```ts
 * import { TERMINAL_STATES } from "./record.ts";
 * console.log(TERMINAL_STATES.includes("lost"), TERMINAL_STATES.includes("killing")); // true false
 * ```
 */
export const TERMINAL_STATES: readonly TaskState[] = ["exited", "killed", "timed_out", "oom_killed", "lost", "never_started"];

/**
 * Every state a record can hold: the live ones first, then the terminal ones.
 *
 * @example
 * ```ts
 * import { ALL_STATES } from "./record.ts";
 * console.log(ALL_STATES.join(" ")); // "starting running killing exited killed timed_out oom_killed lost never_started"
 * ```
 */
export const ALL_STATES: readonly TaskState[] = ["starting", "running", "killing", ...TERMINAL_STATES];

/**
 * Whether a task in `state` has ended for good.
 *
 * @example
 * ```ts
 * import { isTerminal } from "./record.ts";
 * console.log(isTerminal("running"), isTerminal("timed_out")); // false true
 * ```
 */
export function isTerminal(state: TaskState): boolean {
  return TERMINAL_STATES.includes(state);
}

export type PlacementName = "systemd-scope" | "cgroup-v2" | "process-group";

/**
 * Who started a task, when it matters for its completion: `"cli"` for a
 * command that opened the storage itself (no supervisor held it, so nobody
 * consumes the completion). Such a task, once finished, may be pruned
 * without an ack. Absent: a supervisor's own task, whose completion waits
 * for its owner's ack.
 */
export type TaskOrigin = "cli";
/**
 * The placements, in the order `auto` tries them in daemon mode.
 *
 * @example
 * ```ts
 * import { PLACEMENT_NAMES } from "./record.ts";
 * console.log(PLACEMENT_NAMES[0]); // "systemd-scope"
 * ```
 */
export const PLACEMENT_NAMES: readonly PlacementName[] = ["systemd-scope", "cgroup-v2", "process-group"];

/**
 * What a task runs: an argv (no shell involved) or a shell string run by
 * `shellPath -c`. Records written before `shellPath` existed lack it: they ran `/bin/sh`.
 */
export type TaskCommand = { argv: string[] } | { shell: string; shellPath?: string };

/**
 * What dates a terminal record's `finishedAt`: the wrapper's exit marker
 * (its file time, written as the task ended), the watchdog's timed-out
 * marker, the moment a live watch saw the task's cgroup empty, or the first
 * moment the task was seen gone (then `endedAfter` says since when it may
 * have been gone).
 */
export type FinishedAtSource = "exit-marker" | "timed-out-marker" | "cgroup-emptied" | "seen-gone";

/**
 * Every `finishedAtSource` a record can hold, the best evidence first.
 *
 * @example
 * ```ts
 * import { FINISHED_AT_SOURCES } from "./record.ts";
 * console.log(FINISHED_AT_SOURCES.join(" ")); // "exit-marker timed-out-marker cgroup-emptied seen-gone"
 * ```
 */
export const FINISHED_AT_SOURCES: readonly FinishedAtSource[] = ["exit-marker", "timed-out-marker", "cgroup-emptied", "seen-gone"];

/** Where a placement put a task, enough to find it again after a restart. */
export interface TaskLocation {
  /** systemd unit name, e.g. `outlive-task-t-0123456789abcdef.scope`. */
  unit?: string;
  /** Absolute path of the task's cgroup directory. */
  cgroupDir?: string;
  /** The task's cgroup as `/proc/<pid>/cgroup` shows it (the `0::` path). */
  cgroup?: string;
  /** Whether the unit belongs to the user manager or the system manager. */
  manager?: "user" | "system";
}

/**
 * Everything known about one task: `<storage>/tasks/<id>/record.json`.
 * Written atomically; the exit code itself lives in `io/exit`, written by the
 * task's wrapper, and is copied here once observed.
 */
export interface TaskRecord {
  schemaVersion: number;
  id: string;
  /** Caller's key for keyed (generation-tracked) tasks. */
  key: string | null;
  generation: number | null;
  command: TaskCommand;
  cwd: string;
  state: TaskState;
  exitCode: number | null;
  /** Why the task is in a terminal state, in words a person can act on. */
  reason: string | null;
  createdAt: string;
  /**
   * When the task's process started: its wrapper's start time in
   * /proc/<pid>/stat, else the moment the spawn completed. Records made
   * before that was read say when `run` began (= `createdAt`).
   */
  startedAt: string | null;
  /** When the task ended, from the evidence `finishedAtSource` names. Records made before it say when the end was noticed. */
  finishedAt: string | null;
  /** In a terminal record: what dates `finishedAt`. Absent in records made before it. */
  finishedAtSource?: FinishedAtSource | null;
  /** In a terminal record dated `seen-gone`: the last moment the task was known alive; it ended between this and `finishedAt`. */
  endedAfter?: string | null;
  /** In a terminal record: `finishedAt` − `startedAt` in milliseconds (null without a start). Absent in records made before it. */
  durationMs?: number | null;
  lastOutputAt: string | null;
  /** The last bytes of stdout and stderr, decoded as UTF-8, for terminal records. */
  outputTail: string | null;
  timeoutSeconds: number | null;
  /** Absolute deadline (ISO): the timeout, or the ceiling when there is none. Counts from the original start. */
  deadlineAt: string;
  /** Whether the deadline came from the task's own timeout (true) or the default ceiling (false). */
  deadlineIsTimeout: boolean;
  memoryMaxBytes: number | null;
  /** The wrapper's pid: the task's group leader (`pgid` too); the user's command runs under it. */
  pid: number | null;
  pgid: number | null;
  /**
   * The pid of the user's command itself (the `sleep` of `sleep 600`; a shell
   * task's shell, or what it `exec`ed; a PTY task's terminal session leader),
   * once seen. Absent in records made before it existed, and when the command
   * never started.
   */
  commandPid?: number;
  /** Field 22 of /proc/<pid>/stat at spawn. */
  startTime: string | null;
  bootId: string;
  /** The supervisor incarnation that spawned the task. */
  incarnation: string;
  /** The supervisor's own cgroup v2 path when it spawned the task. */
  supervisorCgroup: string | null;
  placement: PlacementName;
  location: TaskLocation;
  /** When outlive began to kill the task (ISO). It is set only after the exit marker was seen empty, so an exit code written before the kill still wins. */
  killStartedAt: string | null;
  /** Why outlive is killing it (e.g. "killed by request", "superseded by generation 3"). */
  killReason: string | null;
  /** The terminal state the kill leads to: `killed`, or `timed_out` when the deadline caused it. */
  killState: "killed" | "timed_out" | null;
  /** When the owner acknowledged the completion (ISO); unacknowledged terminal tasks are delivered again after a restart. */
  acknowledgedAt: string | null;
  /** Who started it, when nobody consumes its completion (see TaskOrigin). Absent in records made before, and for a supervisor's own tasks. */
  origin?: TaskOrigin;
  /** The terminal size a PTY task started with; absent or null for a task without a terminal. */
  pty?: { cols: number; rows: number } | null;
  /** Bytes of output kept on disk per stream (0: all of it). Absent in records made before the bound existed. */
  maxOutputBytes?: number;
  /**
   * In a terminal record: how many bytes each stream received in all, which
   * is the offset a follower that read everything stops at. Absent before.
   */
  outputBytes?: { stdout: number; stderr: number } | null;
  /** The names (never the values) of the variables the run set on top of the starter's environment (its env file's too), sorted. Absent before. */
  envNames?: string[];

  // ---- Kept after its end, and its own cancel (durable MCP tasks: lib/mcp/task-store.ts). ----
  // Optional, in schema 1: an outlive before them reads the record and ignores them.
  /**
   * Keep the task at least this many milliseconds after `finishedAt`:
   * retention (the rule at open, `prune`) never removes it earlier, even
   * acknowledged. An MCP task's TTL. Absent: no floor.
   */
  keepAfterEndMs?: number;
  /** True when it was started as an MCP task (a task-augmented `tools/call` of run_task): its id is then a handle `tasks/get` resolves. */
  mcpTask?: boolean;
  /**
   * When the task's own cancel (an MCP client's `tasks/cancel`) asked for the
   * kill that ends it; written with the `killing` record. Absent when anyone
   * else killed it (kill_task, `outlive kill`, a supersede, the deadline).
   */
  cancelledAt?: string;
  /** The env file the run read its variables from (its path only). Absent without one. */
  envFile?: string | null;
  /** When the task counts as ready (`readyLog`, `readyPort`, `readyHttp`). Absent or null without a condition. */
  ready?: ReadySpec | null;
  /** When the task was found ready (ISO), from the evidence `readyAtSource` names; null until then. */
  readyAt?: string | null;
  readyAtSource?: ReadyAtSource | null;
  /** The restart policy outlive-shim carries out. Absent or null without one. */
  restart?: RestartPolicy | null;
  /** How many times the command was started again (from `io/attempts`). Absent without a policy. */
  restarts?: number;
  /** CPU and process limits beside `memoryMaxBytes`. Absent or null without one. */
  cpuCores?: number | null;
  pidsMax?: number | null;
  /** In a terminal record of a task with a CPU or pids limit: what the limits did, read at its end. */
  limitEvents?: LimitEvents | null;
  /** A digest of the checked run spec (lib/start/spec-digest.ts), which `ensure` compares. Absent before. */
  specDigest?: string;
}
