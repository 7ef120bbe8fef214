import type { ExitMarker } from "../observe/exit-marker.ts";
import type { TaskLocation } from "../store/record/record.ts";

/*
 * The shape of what replay knows of one task: gathered by I/O (evidence.ts),
 * judged (decide.ts) and dated (end-time.ts). Types only, in a file of their
 * own, so the judge and the dating each import them and not each other.
 */

/** What the process table says about the recorded pid now. */
export type PidEvidence =
  /** No such process (or a zombie). */
  | "absent"
  /** Same pid and start time, and in the task's cgroup or unit. */
  | "same"
  /** Same pid and start time, but no longer in the task's cgroup or unit. */
  | "same-elsewhere"
  /** The pid exists with another start time: someone else's process now. */
  | "reused";

/**
 * What the cgroup a task shared with its dead supervisor shows now.
 * `removed` and `emptied` are evidence that it was killed; the rest are not.
 */
export type SpawnerCgroupEvidence =
  /** The cgroup directory no longer exists. */
  | { kind: "removed" }
  /** It exists, and nothing older than the task (nor another task of that supervisor) survives in it. */
  | { kind: "emptied" }
  /** The root cgroup: nothing kills it. */
  | { kind: "root" }
  /** Processes that would have died with a cgroup kill still run there. */
  | { kind: "survivors"; detail: string }
  | { kind: "unknown"; why: string };

/** Everything replay looked at for one task; gathered by I/O elsewhere, judged here. */
export interface ReplayEvidence {
  bootIdNow: string;
  marker: ExitMarker;
  /** When the wrapper's watchdog ended the task at its deadline, if it did. */
  timedOutAt: string | null;
  pid: PidEvidence;
  /** Live processes of the task still run in its group or cgroup although the wrapper is gone (zombies do not count). */
  remnants: boolean;
  /** OOM kills in the task's cgroup; null without memory accounting. */
  oomKills: number | null;
  /** Where the OOM evidence came from when not `memory.events` (e.g. systemd's Result after the scope was removed). */
  oomDetail?: string | null;
  /** The incarnation that spawned the task: still alive? null when its record is gone. */
  spawnerAlive: boolean | null;
  /** When the supervisor replaying this came up, i.e. when it restarted. */
  restartedAt: string;
  lastOutputAt: string | null;
  /** For a task that ran in its dead supervisor's cgroup: what that cgroup shows now. Absent or null otherwise. */
  spawnerCgroup?: SpawnerCgroupEvidence | null;
  /**
   * For a `starting` record (its supervisor died before recording the pid):
   * the task's wrapper, found alive by the task's unit or cgroup; else null.
   */
  located?: { pid: number; startTime: string; location: TaskLocation } | null;
  /**
   * For a `starting` record not located: whether its command ever started
   * (its pid file, output or end exists); null when that cannot be told.
   */
  commandStarted?: boolean | null;
  /** With an exit code: the time of `io/ended`, which the wrapper made the moment its command ended (ISO); null without it. */
  commandEndedAt?: string | null;
  /**
   * Without an exit code: the line outlive-shim left in `io/shim-refused` when it refused to start the task
   * (exit 125, nothing run); null (or absent) when there is none.
   */
  shimRefused?: string | null;
  /** With an exit code: the wrapper got SIGTERM while systemd was stopping the system (`io/host-stopping`). */
  hostStopping?: boolean;
  /**
   * With an exit code and no `io/host-stopping`: a TERM came from outside and whether the host was stopping
   * was asked but not answered in time, in the shim's words (`io/host-unanswered`); null (or absent) otherwise.
   */
  hostUnanswered?: string | null;
  /** When the process table was looked at for this evidence (ISO), just after the look. */
  lookedAt?: string;
  /** The last moment this process saw the task alive (ISO), if it did. */
  seenAliveAt?: string | null;
  /** The first moment this process saw the task gone (ISO), if it did before this look. */
  seenGoneAt?: string | null;
  /** The moment a live watch saw the task's cgroup empty (ISO); null when none did. */
  emptiedAt?: string | null;
  /** When this boot began (ISO), for a task recorded under another boot: it ended before then. */
  bootedAt?: string | null;
}
