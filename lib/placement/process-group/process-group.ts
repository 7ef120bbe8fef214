import { readCgroup } from "../../proc/cgroup.ts";
import type { LiveProcess } from "../../proc/identity.ts";
import { OutliveError } from "../../errors.ts";
import type { TaskLocation, TaskRecord } from "../../store/record/record.ts";
import type { SpawnerHome } from "../spawner-home.ts";
import type { LocatedTask, MemoryEvents, Placement, PlacementProbe, PlacementTask, SpawnPlan } from "../placement.ts";

/**
 * A plain process group in the supervisor's own cgroup. Works everywhere,
 * but cannot survive a restart that kills the supervisor's cgroup: the tasks
 * die with it, and replay says so.
 *
 * @example
 * ```ts
 * import { ProcessGroupPlacement } from "./process-group.ts";
 * const placement = new ProcessGroupPlacement();
 * console.log((await placement.probe()).ok); // true: it works everywhere
 * const plan = await placement.plan({ id: "t-1", backstopSeconds: 60, memoryMaxBytes: null });
 * console.log(plan.prefix, plan.enterCgroupProcs); // [] null: the wrapper runs as it is
 * ```
 */
export class ProcessGroupPlacement implements Placement {
  readonly name = "process-group" as const;

  async probe(): Promise<PlacementProbe> {
    return {
      name: this.name,
      ok: true,
      reason: "always available; tasks share the supervisor's cgroup, so a kill of that cgroup ends them too",
      details: { cgroup: safeCgroup() },
      controllers: [],
    };
  }

  async plan(task: PlacementTask): Promise<SpawnPlan> {
    if (task.memoryMaxBytes !== null) {
      throw new OutliveError(
        "E_MEMORY_CAP_UNSUPPORTED",
        "The process-group placement cannot cap memory; use the cgroup-v2 or systemd-scope placement",
      );
    }
    const cgroup = safeCgroup();
    return { prefix: [], env: {}, enterCgroupProcs: null, location: cgroup ? { cgroup } : {} };
  }

  async started(record: TaskRecord): Promise<TaskLocation> {
    return record.location;
  }

  identify(record: TaskRecord, live: LiveProcess): boolean {
    // pid and start time were checked by the caller; a task never leaves the cgroup it started in on its own.
    return record.location.cgroup === undefined || live.cgroup === record.location.cgroup;
  }

  async limitsProblem(): Promise<string | null> {
    return "a process group has no cgroup of its own to limit; use the cgroup-v2 or systemd-scope placement (outlive probe says which work here)";
  }

  async killAll(): Promise<void> {}
  async isEmpty(): Promise<boolean | null> {
    return null;
  }
  watchEmpty(): boolean {
    return false;
  }
  async memoryEvents(): Promise<MemoryEvents | null> {
    return null;
  }
  async list(): Promise<string[]> {
    return [];
  }
  /** A process group has no name to be found by: a task whose pid was never recorded cannot be found. */
  async locate(): Promise<LocatedTask | null> {
    return null;
  }
  async stop(): Promise<void> {}
  /** None: a process group has no cgroup but the supervisor's, so the supervisor forks its tasks itself. */
  spawnerHome(): SpawnerHome | null {
    return null;
  }

  async flush(): Promise<void> {}

  async release(): Promise<void> {}
}

function safeCgroup(): string | undefined {
  try {
    return readCgroup("self") ?? undefined;
  } catch {
    return undefined;
  }
}
