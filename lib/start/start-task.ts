import type { ChildProcess } from "node:child_process";
import type { KeyedTasks } from "../generation/keyed-tasks.ts";
import type { Placement } from "../placement/placement.ts";
import { ptyPaths } from "../pty/holder.ts";
import { awaitTerminal } from "../pty/task-terminal.ts";
import { awaitCommandPid } from "../spawn/command-pid.ts";
import { SpawnFailure, spawnPlaced } from "../spawn/spawn-placed.ts";
import type { SpawnerClient } from "../spawner/spawner-client.ts";
import type { Incarnation } from "../store/storage/incarnation.ts";
import type { TaskRecord } from "../store/record/record.ts";
import { newTaskId } from "../store/record/task-id.ts";
import type { TaskStore } from "../store/task-store.ts";
import type { TaskTable } from "../store/task-table.ts";
import type { TaskEnd } from "../end/terminal-record.ts";
import type { TaskStep } from "./task-steps.ts";
import { deadlineSecondsOf, newTaskRecord } from "./new-record.ts";
import { checkProgram } from "./program-lookup.ts";
import { type CheckedRunSpec, taskEnv } from "./run-spec.ts";
import { OutliveError } from "../errors.ts";

/**
 * The space a task's terminal record is kept beyond its first record's
 * size: two output tails as JSON (up to 6 bytes a byte when escaped) and the reason.
 */
const RESERVE_BASE_BYTES = 8192;
const RESERVE_PER_TAIL_BYTE = 12;
/**
 * How long `run` waits for the wrapper to say the command's pid before it
 * records the task without one. It comes within a fork of the wrapper's
 * start; only a machine stalled for this long misses it.
 */
const COMMAND_PID_WITHIN_MS = 2_000;

export interface TaskStarterOptions {
  table: TaskTable;
  store: TaskStore;
  /** The placement new tasks get. */
  placement: Placement;
  keyed: KeyedTasks;
  incarnation: Incarnation;
  bootId: string;
  limits: {
    ceilingSeconds: number;
    maxOutputBytes: number;
    backstopSlackSeconds: number;
    graceMs: number;
    tailBytes: number;
    ptyReadyMs: number;
  };
  /** Records the end of a task whose spawn failed (see TaskEnder.endOne). */
  end(record: TaskRecord, end: TaskEnd): Promise<TaskRecord>;
  /** Starts watching a task that runs now (its wrapper this process's child, or null when the spawner forked it). */
  watch(record: TaskRecord, child: ChildProcess | null): void;
  /** Hears each step of a start (see TASK_STEPS). */
  step(id: string, step: TaskStep): void;
  /** Forks tasks from outside this process's cgroup; null to fork them here. */
  spawner: SpawnerClient | null;
  /** outlive-shim's path, or null to start tasks under the shell wrapper. */
  shim: string | null;
  /** How the next task's shim hears its output grow (see SupervisorOptions.inotifyTasks). */
  outputWatch(): "inotify" | "poll";
}

/**
 * Starts tasks: an argv task's program is looked up (refused when it cannot
 * run), then the key moves, then the record is made (on disk before
 * the process exists), the task spawned into its placement, and `running`
 * written once it is where it was promised. Runs under way are kept, so a
 * close lets them finish and a drain for a restart hands a placed task to
 * the next incarnation.
 */
export class TaskStarter {
  private readonly underWay = new Set<Promise<unknown>>();
  private readonly byKey = new Map<string, Set<Promise<unknown>>>();

  constructor(private readonly o: TaskStarterOptions) {}

  /** Starts a checked spec and resolves once it runs (in its cgroup, when it has one). */
  start(spec: CheckedRunSpec): Promise<TaskRecord> {
    const id = spec.id ?? newTaskId();
    const running = this.startNow({ ...spec, id });
    const key = spec.key;
    const tracked: Promise<unknown> = running.catch(() => {}).finally(() => {
      this.underWay.delete(tracked);
      const starts = key === null ? undefined : this.byKey.get(key);
      starts?.delete(tracked);
      if (key !== null && starts?.size === 0) this.byKey.delete(key);
    });
    this.underWay.add(tracked);
    if (key !== null) this.byKey.set(key, (this.byKey.get(key) ?? new Set()).add(tracked));
    return running;
  }

  /** Resolves once every start under `key` under way here is over, one way or the other; null when none is. */
  startingUnder(key: string): Promise<unknown> | null {
    const starts = this.byKey.get(key);
    return starts && starts.size > 0 ? Promise.allSettled([...starts]) : null;
  }

  /** Resolves once every start under way has finished, one way or the other. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.underWay]);
  }

  private async startNow(spec: CheckedRunSpec): Promise<TaskRecord> {
    const { table, store, placement, keyed, limits } = this.o;
    // A program that cannot run is refused at the door: nothing stored, and the key does not move, so a live
    // task under it stays current. Looked up here, by whoever starts the task, with the task's own cwd and env.
    if ("argv" in spec.command) checkProgram(spec.command.argv, { ...process.env, ...taskEnv(spec) }, spec.cwd);
    // What the task asks of its process or placement and cannot have here is refused before anything is stored.
    if (spec.restart && this.o.shim === null) {
      throw new OutliveError("E_RESTART_UNSUPPORTED", "Cannot run a task under a restart policy here: tasks run under the shell wrapper (no outlive-shim was found, or OUTLIVE_SHIM=none / shimPath: false asks for the wrapper), and the policy is carried out by outlive-shim");
    }
    if (spec.cpuCores !== null || spec.pidsMax !== null) {
      const problem = await placement.limitsProblem({ cpuCores: spec.cpuCores, pidsMax: spec.pidsMax });
      if (problem) throw new OutliveError("E_LIMIT_UNSUPPORTED", `Cannot limit ${limitWords(spec)} in the ${placement.name} placement here: ${problem}`);
    }
    // The key moves to the new generation before anything else happens, so a predecessor is stale from here on.
    const key = spec.key === null ? null : keyed.begin(spec.key);
    const starting = newTaskRecord(spec, {
      id: spec.id ?? newTaskId(),
      generation: key?.generation ?? null,
      now: new Date(),
      incarnation: this.o.incarnation,
      bootId: this.o.bootId,
      placement: placement.name,
      ceilingSeconds: limits.ceilingSeconds,
      maxOutputBytes: limits.maxOutputBytes,
    });
    // The record exists before the process does: a crash from here on leaves a `starting` record replay can explain.
    let paths;
    try {
      paths = await store.create(starting, { reserveBytes: RESERVE_BASE_BYTES + RESERVE_PER_TAIL_BYTE * limits.tailBytes });
    } catch (error) {
      if (key) keyed.failed(key.handle, error as Error);
      throw error;
    }
    table.commit(starting);
    const step = (name: TaskStep) => this.o.step(starting.id, name);
    step("recorded");
    let placed;
    try {
      placed = await spawnPlaced({
        record: starting,
        paths,
        placement,
        env: taskEnv(spec),
        deadlineSeconds: deadlineSecondsOf(spec, limits.ceilingSeconds),
        backstopSlackSeconds: limits.backstopSlackSeconds,
        graceMs: limits.graceMs,
        spawned: (record) => table.claim(record),
        step,
        spawner: this.o.spawner,
        shim: this.o.shim,
        watch: this.o.outputWatch(),
      });
    } catch (error) {
      if (!(error instanceof SpawnFailure)) throw error;
      // Held first, so the end (and the placement's release) knows where the task was put.
      table.claim(error.record);
      await this.o.end(error.record, { state: "lost", exitCode: null, reason: error.reason });
      if (key) keyed.failed(key.handle, error.error);
      throw error.error;
    }
    // The user's command's own pid goes into the `running` record, so every reader (ps, inspect, a restart's
    // adoption) has it from the first. The wrapper writes it within a fork of its start; a PTY task's comes
    // with its terminal, which `run` waits for anyway.
    step("placed");
    const commandPid = await awaitCommandPid(placed.record, paths, spec.pty ? limits.ptyReadyMs : COMMAND_PID_WITHIN_MS);
    step("command-pid");
    // `running` is written once, when the process is where it was promised: a supervisor killed before
    // that (with the process still in its cgroup, e.g. systemd-run not yet in its scope) leaves `starting`,
    // which replay reports as a spawn that did not complete, and startup cleanup stops what got through.
    const record: TaskRecord = { ...placed.record, ...(commandPid === null ? {} : { commandPid }), state: "running" };
    if (!table.claim(record)) {
      // Ended while it was being placed (a kill asked for meanwhile): the end stands, and settles the key.
      const ended = table.get(record.id)!;
      if (key) keyed.started(key.handle, ended);
      keyed.ended(ended);
      return ended;
    }
    // Observation starts while the record is being made durable: a task that ends at once is settled
    // meanwhile, and its terminal write queues behind this one (the store keeps one task's writes in
    // order). The caller hears back once it is on disk.
    const written = store.write(record).then(() => table.landed(record));
    this.o.watch(record, placed.child);
    await written;
    step("running");
    // Superseded while it was being spawned? The held supersede is carried out now.
    if (key) keyed.started(key.handle, record);
    // From the moment run() returns, a PTY task's terminal takes input and resizes.
    if (spec.pty) await awaitTerminal(ptyPaths(paths.dir), record.pid!, limits.ptyReadyMs);
    return record;
  }
}

/** The limits a spec asks for, in words. */
function limitWords(spec: CheckedRunSpec): string {
  return [spec.cpuCores !== null ? `cpu to ${spec.cpuCores} cores` : "", spec.pidsMax !== null ? `processes to ${spec.pidsMax}` : ""].filter(Boolean).join(" and ");
}
