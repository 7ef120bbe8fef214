import type { ChildProcess } from "node:child_process";
import { OutliveError } from "../errors.ts";
import { signalGroup } from "../kill/process-group.ts";
import type { Placement } from "../placement/placement.ts";
import { findCgroup2Mount } from "../placement/cgroup-fs.ts";
import { inspectPid } from "../proc/identity.ts";
import { processStartedAt } from "../proc/start-time.ts";
import type { TaskRecord } from "../store/record/record.ts";
import type { TaskPaths } from "../store/layout.ts";
import type { SpawnerClient } from "../spawner/spawner-client.ts";
import { spawnFilesOf, spawnTask } from "./spawn-task.ts";
import { taskProgram } from "./task-program.ts";

/** How long a new process may take to appear in its unit or cgroup before the task is given up. */
const PLACED_WITHIN_MS = 10_000;

export interface SpawnPlacedInput {
  /** The `starting` record, already on disk. */
  record: TaskRecord;
  paths: TaskPaths;
  placement: Placement;
  /** The task's own environment (on top of this process's). */
  env: Record<string, string>;
  deadlineSeconds: number;
  backstopSlackSeconds: number;
  graceMs: number;
  /** Hears the record as soon as the pid is known, before the process is in its placement. */
  spawned(record: TaskRecord): void;
  /** Hears the steps taken here: `planned`, `sent` (to the spawner), `forked`. */
  step(name: "planned" | "sent" | "forked"): void;
  /** Forks the task from outside this process's cgroup (lib/spawner); null to fork it here. */
  spawner: SpawnerClient | null;
  /** outlive-shim's path (lib/spawn/shim-path.ts), or null to start the task under the shell wrapper. */
  shim: string | null;
  /** How the shim learns its output grew: `inotify` while this supervisor's tasks leave instances to spare. */
  watch: "inotify" | "poll";
}

/** The task runs where it was promised; `record` says where (location, pid, start time), still `starting`. */
export interface PlacedTask {
  record: TaskRecord;
  /** The wrapper as this process's child; null when the spawner forked it. */
  child: ChildProcess | null;
}

/**
 * A spawn that did not end with the task in its placement. `record` is the
 * task as far as it got; nothing of the task runs any more (what was started
 * was killed). The caller records the end with `reason`, then throws `error`.
 */
export class SpawnFailure extends Error {
  constructor(readonly record: TaskRecord, readonly reason: string, readonly error: Error) {
    super(reason, { cause: error });
  }
}

/**
 * Plan → program → spawn → placed: asks the placement for its plan, starts
 * the command under outlive-shim (or, where there is none, the shell wrapper:
 * exit marker, deadline, output bound, a PTY task's terminal), and waits
 * (bounded) until the process is in its cgroup or unit. A task that never
 * gets there is killed: it must not run outside the cgroup it was promised.
 */
export async function spawnPlaced(input: SpawnPlacedInput): Promise<PlacedTask> {
  const { placement, paths, deadlineSeconds } = input;
  let record = input.record;
  let spawned;
  let spawnedAt: Date;
  try {
    const plan = await placement.plan({
      id: record.id,
      backstopSeconds: deadlineSeconds + input.backstopSlackSeconds,
      memoryMaxBytes: record.memoryMaxBytes,
      cpuCores: record.cpuCores ?? null,
      pidsMax: record.pidsMax ?? null,
    });
    record = { ...record, location: plan.location };
    input.step("planned");
    const env = { ...process.env, ...input.env };
    const program = taskProgram({
      record,
      paths,
      shim: input.shim,
      enterCgroupProcs: plan.enterCgroupProcs,
      deadlineSeconds,
      graceMs: input.graceMs,
      watch: input.watch,
      env,
      limitStats: (record.cpuCores ?? null) !== null || (record.pidsMax ?? null) !== null ? findCgroup2Mount() : null,
      hostAskMs: plan.hostAskMs,
    });
    const argv = [...plan.prefix, ...program.argv];
    // Under a placement's prefix (systemd-run) the shim's argv[0] is its path; it names itself (see the shim's main.rs).
    const argv0 = plan.prefix.length === 0 ? program.argv0 : null;
    const taskEnv = stringsOnly({ ...env, ...plan.env });
    if (input.spawner) {
      const answer = await input.spawner.spawn(
        { id: record.id, argv, cwd: record.cwd, env: taskEnv, files: spawnFilesOf(paths), ...(program.stdin ? { stdin: program.stdin.toString("base64") } : {}), ...(argv0 ? { argv0 } : {}) },
        () => input.step("sent"),
      );
      spawned = { pid: answer.pid, child: null, startedWithin: answer.startedWithin };
    } else {
      spawned = await spawnTask(argv, { cwd: record.cwd, env: taskEnv, files: spawnFilesOf(paths), stdin: program.stdin, argv0 });
    }
    spawnedAt = new Date();
    input.step("forked");
  } catch (error) {
    if ((error as { code?: string }).code === "E_SPAWNER_GONE") {
      // The fork may have happened: whatever got into the task's unit or cgroup is ended, so nothing runs unseen.
      await placement.stop(record.id).catch(() => {});
      throw new SpawnFailure(record, `spawn did not complete: ${(error as Error).message}; whatever it had started was stopped`, error as Error);
    }
    throw new SpawnFailure(record, `spawn failed: ${(error as Error).message}`, error as Error);
  }
  const live = inspectPid(spawned.pid);
  record = {
    ...record,
    pid: spawned.pid,
    pgid: spawned.pid,
    // A task that already ended has no start time left to read; its exit marker tells the rest.
    startTime: live?.startTime ?? null,
    // When the process itself started: the kernel's word (in clock ticks, within about 10 ms), held to the
    // window this process saw it start in (just before spawn() to its spawn event), else that window's end.
    startedAt: new Date(startedWithin((live && processStartedAt(live.startTime)) || spawnedAt, spawned.startedWithin)).toISOString(),
  };
  input.spawned(record);
  return { record: await awaitPlaced(record, placement), child: spawned.child };
}

/** An environment with only string values (process.env may hold undefined ones), as a spawn request carries it. */
function stringsOnly(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (typeof v === "string") out[k] = v;
  return out;
}

async function awaitPlaced(record: TaskRecord, placement: Placement): Promise<TaskRecord> {
  const deadline = Date.now() + PLACED_WITHIN_MS;
  for (;;) {
    const live = inspectPid(record.pid!);
    if (!live || live.startTime !== record.startTime) return record; // already over; its marker tells the rest
    if (placement.identify(record, live)) {
      return { ...record, location: await placement.started(record, live) };
    }
    if (Date.now() > deadline) {
      signalGroup(record.pgid!, "SIGKILL");
      await placement.killAll(record).catch(() => {});
      const reason = `spawn did not complete: the process never appeared in its ${placement.name} placement within ${PLACED_WITHIN_MS / 1000} s`;
      throw new SpawnFailure(record, reason, new OutliveError("E_SPAWN", `Task ${record.id}: ${reason}`));
    }
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** `at` held to the window a process was seen to start in: a start read in clock ticks may fall a tick outside it. */
export function startedWithin(at: Date, window: { after: number; before: number }): number {
  return Math.min(Math.max(at.getTime(), window.after), window.before);
}
