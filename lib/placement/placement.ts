import type { LiveProcess } from "../proc/identity.ts";
import type { SpawnerHome } from "./spawner-home.ts";
import type { TaskLimits } from "../limits/limits.ts";
import type { PlacementName, TaskLocation, TaskRecord } from "../store/record/record.ts";

/** Whether a placement can work on this machine, and why (not). */
export interface PlacementProbe {
  name: PlacementName;
  ok: boolean;
  /** One line: why it works, or what is missing (not installed / no user manager / too old / not writable). */
  reason: string;
  /** Facts found on the way: versions, paths, controllers. */
  details: Record<string, unknown>;
  /**
   * The cgroup v2 controllers a task of this placement can be limited by
   * (`memory`, `cpu`, `pids`, …); empty for none (a process group), null
   * where the placement does not work here.
   */
  controllers: string[] | null;
}

/** What a task needs to be placed: only validated values reach a placement. */
export interface PlacementTask {
  id: string;
  /** Seconds from now until the backstop must end the task even with no supervisor alive. */
  backstopSeconds: number;
  memoryMaxBytes: number | null;
  /** Cores (`cpu.max`, `CPUQuota=`); null or absent for no limit. */
  cpuCores?: number | null;
  /** Processes at once (`pids.max`, `TasksMax=`); null or absent for no limit. */
  pidsMax?: number | null;
}

/**
 * How to start one task: the placement's argv goes in front of
 * `/bin/sh -c <wrapper> …`, and `enterCgroupProcs`, when set, names a
 * `cgroup.procs` file the wrapper writes its own pid to before any user code runs.
 */
export interface SpawnPlan {
  prefix: string[];
  env: Record<string, string>;
  enterCgroupProcs: string | null;
  location: TaskLocation;
  /**
   * How long the task's shim, after a TERM from outside, may wait for the
   * host's answer whether it is stopping, where something KILLs the task a
   * known time after such a TERM (a scope's stop timeout). Absent: the
   * shim's own default (4 s).
   */
  hostAskMs?: number;
}

/** A task's wrapper found by its unit or cgroup: its identity and where it is. */
export interface LocatedTask {
  pid: number;
  startTime: string;
  location: TaskLocation;
}

/** OOM kills seen in a task's cgroup (`memory.events`). */
export interface MemoryEvents {
  oomKill: number;
  max: number;
  /** Where the count came from, when not the cgroup's own `memory.events` (its cgroup may be gone). */
  detail?: string;
}

/**
 * The one seam between the supervisor and where tasks live. Every
 * implementation fills all of it; the supervisor never asks which one it holds.
 */
export interface Placement {
  readonly name: PlacementName;
  /** Can it work here? Never throws: a failure is `ok: false` with the reason. */
  probe(): Promise<PlacementProbe>;
  /** Pre-spawn step (make the cgroup, check the cap) and how to spawn. */
  plan(task: PlacementTask): Promise<SpawnPlan>;
  /**
   * Called once the task's process runs and was identified: returns the full
   * location (a scope's cgroup is known only now) and does any post-start
   * step (such as `memory.oom.group` on a scope).
   */
  started(record: TaskRecord, live: LiveProcess): Promise<TaskLocation>;
  /** Does this live process belong to this task's cgroup or unit? */
  identify(record: TaskRecord, live: LiveProcess): boolean;
  /** After the group ladder: end whatever is left in the task's cgroup and wait until it is empty. */
  killAll(record: TaskRecord, signal?: AbortSignal): Promise<void>;
  /** True when nothing of the task runs any more in its cgroup; null when the placement cannot tell. */
  isEmpty(record: TaskRecord): Promise<boolean | null>;
  /**
   * Calls `onEmpty` once when the task's cgroup becomes empty (from the
   * kernel's `cgroup.events` notifications), until `signal` aborts. Returns
   * false where the placement cannot watch (no cgroup).
   */
  watchEmpty(record: TaskRecord, onEmpty: () => void, signal: AbortSignal): boolean;
  /**
   * Why this placement cannot enforce these CPU and pids limits here (a
   * controller missing, no cgroup of its own), or null when it can. Asked at
   * `run`'s door, before anything is stored.
   */
  limitsProblem(limits: TaskLimits): Promise<string | null>;
  /** OOM kills in the task's cgroup; null where there is no memory accounting. */
  memoryEvents(record: TaskRecord): Promise<MemoryEvents | null>;
  /** Task ids of this prefix whose unit or cgroup exists now. */
  list(): Promise<string[]>;
  /**
   * Finds a task's wrapper in its unit or cgroup by id alone, for a task
   * whose supervisor died before it recorded the pid. Null where the
   * placement cannot tell (a plain process group) or nothing runs there.
   */
  locate(id: string): Promise<LocatedTask | null>;
  /** End and remove the unit/cgroup of a task id (startup cleanup, stop-all). Only for ids this storage knows. */
  stop(id: string, signal?: AbortSignal): Promise<void>;
  /** Remove what is left of a finished task (an empty cgroup directory). May finish in the background; see `flush`. */
  release(record: TaskRecord): Promise<void>;
  /** Waits (bounded) for clean-up still under way, such as cgroups that were busy a moment ago. */
  flush(): Promise<void>;
  /**
   * Where this placement's spawner lives, outside the supervisor's cgroup
   * (lib/spawner), for the storage named by `key`; null where there is no
   * such place (a plain process group has no cgroup but the supervisor's),
   * and tasks are then forked by the supervisor itself.
   */
  spawnerHome(key: string): SpawnerHome | null;
}
