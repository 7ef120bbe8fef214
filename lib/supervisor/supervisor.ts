import type { ChildProcess } from "node:child_process";
import { OutliveError } from "../errors.ts";
import { type KillHow, killLadder } from "../kill/kill-ladder.ts";
import { liveGroupMembers, signalGroup } from "../kill/process-group.ts";
import { readExitMarker, readExitMarkerNow } from "../observe/exit-marker.ts";
import { summarizeOutput } from "../observe/output-tail.ts";
import { checkOutputOptions, type OutputChunk, type OutputOptions } from "../output/request.ts";
import { followOutput } from "../output/follow.ts";
import { TRIM_SCRIPT } from "../output/trim-loop.ts";
import { TaskWatch } from "../observe/task-watch.ts";
import { choosePlacement, makePlacements } from "../placement/choose.ts";
import type { Placement } from "../placement/placement.ts";
import { bootId } from "../proc/boot-id.ts";
import { inspectPid } from "../proc/identity.ts";
import { decideReplay, type ReplayDecision } from "../replay/decide.ts";
import { gatherEvidence, pidEvidence } from "../replay/evidence.ts";
import { replayAll } from "../replay/replay-all.ts";
import { holderCommand, ptyPaths } from "../pty/holder.ts";
import { resizeTerminal, terminalOf, writeTerminal, type PtySize } from "../pty/mod.ts";
import { awaitTerminal } from "../pty/task-terminal.ts";
import { spawnTask } from "../spawn/spawn-task.ts";
import { wrapperArgv } from "../spawn/wrapper.ts";
import {
  currentIncarnation,
  type Incarnation,
  incarnationAlive,
  loadIncarnation,
  saveIncarnation,
} from "../store/incarnation.ts";
import { isTerminal, SCHEMA_VERSION, type PlacementName, type TaskRecord, type TaskState } from "../store/record.ts";
import { acquireStorageLock, releaseStorageLock } from "../store/storage-lock.ts";
import { checkTaskId, newTaskId } from "../store/task-id.ts";
import { fileSystemFull, fullDiskWords } from "../store/space.ts";
import { TaskStore, type UnreadableTask } from "../store/task-store.ts";
import { ControlServer } from "../control/server.ts";
import { normalizePruneRule } from "../retention/options.ts";
import { readGenerationFloor } from "../retention/generation-floor.ts";
import { CLOSE_PURGE_BUDGET_MS, Purger } from "../retention/purger.ts";
import { prune, type PruneResult, pruneWhenOver, removeByName, retainAtOpen, type RetentionHost } from "../retention/retention.ts";
import { CompletionQueue } from "./completion-queue.ts";
import { type NormalizedOptions, normalizeOptions, type RunSpec, type SupervisorOptions } from "./options.ts";
import { KeyedTasks } from "./keyed-tasks.ts";
import { checkRunSpec } from "./run-spec.ts";
import { cleanUpAtStartup, forEachPlacedTask } from "./startup-cleanup.ts";

/**
 * The space a task's terminal record is kept beyond its first record's
 * size: two output tails as JSON (up to 6 bytes a byte when escaped) and the reason.
 */
const RESERVE_BASE_BYTES = 8192;
/** How long a check of a task that has written its exit code waits for this process to reap its wrapper (see TaskWatch.reaped). */
const REAP_WAIT_MS = 1000;
const RESERVE_PER_TAIL_BYTE = 12;

/** What replay found when the supervisor opened. */
export interface ReplayReport {
  adopted: string[];
  finished: Array<{ id: string; state: TaskState; exitCode: number | null; reason: string }>;
  unchanged: string[];
  deferred: Array<{ id: string; reason: string }>;
  unreadable: UnreadableTask[];
  /** Units or cgroups whose record here was terminal, and were stopped. */
  cleanedUp: string[];
  /** Units or cgroups of this prefix with no record here: left alone (another instance may own them). */
  foreign: string[];
  /** Opened `readOnly`: the decisions replay made in memory and did not store (the records on disk are unchanged). */
  unstored: Array<{ id: string; state: TaskState; reason: string }>;
}

export interface KillResult {
  record: TaskRecord;
  how: KillHow | "terminal";
}

/** How a task ended: what a terminal record says. */
type TaskEnd = { state: TaskState; exitCode: number | null; reason: string };

/** Why the supervisor is draining: the daemon's word for it. */
export type DrainReason = "restart" | "reload" | "disable" | "shutdown";

/**
 * Runs background tasks that outlive this process, and tells the truth
 * about them after a restart. Open one per storage; a second live one is refused.
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { Supervisor } from "./supervisor.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-example-"));
 * // Standalone: tasks run as process groups. `mode: "daemon"` puts each in its own
 * // systemd scope or cgroup instead, where the machine allows it (systemd, or root).
 * const sup = await Supervisor.open({ storage, mode: "standalone" });
 * const task = await sup.run({ argv: ["sh", "-c", "echo hi; exit 3"] });
 * const done = await sup.wait(task.id);
 * console.log(done.state, done.exitCode); // "exited" 3
 * await sup.close();
 * rmSync(storage, { recursive: true });
 * ```
 */
export class Supervisor {
  readonly options: NormalizedOptions;
  readonly store: TaskStore;
  readonly incarnation: Incarnation;
  /** The placement new tasks get. */
  readonly placement: Placement;
  /** Why that placement was chosen (also logged once). */
  readonly placementReason: string;
  readonly placements: Record<PlacementName, Placement>;
  /** What replay found at open. */
  replayReport!: ReplayReport;
  /** What the `retention` rule removed at open. */
  retainedAtOpen!: PruneResult;

  private readonly records = new Map<string, TaskRecord>();
  private readonly watched = new Map<string, TaskWatch>();
  private readonly queue = new CompletionQueue();
  /** Runs under way: close lets them finish, so a drain for a restart hands a placed task to the next incarnation. */
  private readonly starting = new Set<Promise<unknown>>();
  /** Kill ladders under way, by task id: a second kill joins the first, and close waits for them. */
  private readonly killing = new Map<string, Promise<KillResult>>();
  /** One task per key; made at replay, once the largest stored generation is known. */
  private keyed!: KeyedTasks;
  private readonly bootIdNow = bootId();
  private readonly deadIncarnations = new Map<string, Promise<boolean | null>>();
  /** Answers under way, shared by everyone asking meanwhile (see incarnationAlive). */
  private readonly askingIncarnations = new Map<string, Promise<boolean | null>>();
  private control: ControlServer | null = null;
  private readonly purger: Purger;
  /** A prune by the retention rule under way, started by an ack. */
  private pruning: Promise<void> | null = null;
  private closed = false;
  private replayIndex: Map<string, TaskRecord[]> | null = null;
  /** Ends every output follower when the supervisor closes. */
  private readonly closing = new AbortController();

  private constructor(
    options: NormalizedOptions,
    store: TaskStore,
    incarnation: Incarnation,
    placements: Record<PlacementName, Placement>,
    chosen: { placement: Placement; reason: string },
  ) {
    this.options = options;
    this.store = store;
    this.incarnation = incarnation;
    this.placements = placements;
    this.placement = chosen.placement;
    this.placementReason = chosen.reason;
    this.purger = new Purger(store.root, options.log);
  }

  /** Takes the storage, records this incarnation, chooses a placement, replays every task. */
  static async open(input: SupervisorOptions = {}): Promise<Supervisor> {
    const options = normalizeOptions(input);
    const store = await TaskStore.open(options.storage, { readOnly: options.readOnly, ballastBytes: options.ballastBytes });
    const incarnation = currentIncarnation();
    // A read-only view takes no lock: it changes nothing, so it cannot race the holder.
    if (!options.readOnly) await acquireStorageLock(store.root, incarnation);
    let sup: Supervisor | null = null;
    try {
      if (!options.readOnly) await saveIncarnation(store.root, incarnation);
      const placements = makePlacements(options.prefix, options.cgroupBase, options.placements);
      const chosen = await choosePlacement(placements, options.placement, options.mode);
      options.log(`placement ${chosen.reason}`);
      sup = new Supervisor(options, store, incarnation, placements, chosen);
      await sup.replay();
      // A view changes nothing and serves no one: no pruning, no control channel.
      if (options.readOnly) {
        sup.retainedAtOpen = { removed: [], incarnationsRemoved: 0 };
        return sup;
      }
      // Pruning is housekeeping: a storage it cannot tidy is still opened, and says why once.
      sup.retainedAtOpen = await retainAtOpen(sup.retentionHost(), options.retention).catch((error) => {
        options.log(`pruning at open by the retention rule failed: ${(error as Error).message}`);
        return { removed: [], incarnationsRemoved: 0 };
      });
      if (options.control) sup.control = await ControlServer.start(store.root, sup.controlTarget(), options.log);
      return sup;
    } catch (error) {
      // What a failed open started ends with it: the watches of tasks replay had adopted would otherwise
      // keep the process alive, and write records after the lock was given up (found at 2 free descriptors).
      await sup?.close().catch(() => {});
      if (!options.readOnly) await releaseStorageLock(store.root, incarnation);
      throw error;
    }
  }

  /** Starts a task and resolves once it runs (in its cgroup, when it has one). */
  run(spec: RunSpec): Promise<TaskRecord> {
    try {
      this.assertOpen();
    } catch (error) {
      return Promise.reject(error);
    }
    const running = this.start(spec);
    const tracked = running.catch(() => {}).finally(() => this.starting.delete(tracked));
    this.starting.add(tracked);
    return running;
  }

  private async start(spec: RunSpec): Promise<TaskRecord> {
    this.assertWritable();
    const checked = checkRunSpec(spec, this.options);
    // The key moves to the new generation before anything else happens, so a predecessor is stale from here on.
    const keyed = checked.key === null ? null : this.keyed.begin(checked.key);
    const id = checked.id ?? newTaskId();
    const now = new Date();
    const timeout = checked.timeoutSeconds;
    const deadlineSeconds = timeout ?? this.options.ceilingSeconds;
    const maxOutputBytes = checked.maxOutputBytes ?? this.options.maxOutputBytes;
    let record: TaskRecord = {
      schemaVersion: SCHEMA_VERSION,
      id,
      key: checked.key,
      generation: keyed?.generation ?? null,
      command: checked.command,
      cwd: checked.cwd,
      state: "starting",
      exitCode: null,
      reason: null,
      createdAt: now.toISOString(),
      startedAt: null,
      finishedAt: null,
      lastOutputAt: null,
      outputTail: null,
      timeoutSeconds: timeout,
      deadlineAt: new Date(now.getTime() + deadlineSeconds * 1000).toISOString(),
      deadlineIsTimeout: timeout !== null,
      memoryMaxBytes: checked.memoryMaxBytes,
      pid: null,
      pgid: null,
      startTime: null,
      bootId: this.bootIdNow,
      incarnation: this.incarnation.id,
      supervisorCgroup: this.incarnation.cgroup,
      placement: this.placement.name,
      location: {},
      killStartedAt: null,
      killReason: null,
      killState: null,
      acknowledgedAt: null,
      pty: checked.pty,
      maxOutputBytes,
    };
    // The record exists before the process does: a crash from here on leaves a `starting` record replay can explain.
    let paths;
    try {
      paths = await this.store.create(record, { reserveBytes: RESERVE_BASE_BYTES + RESERVE_PER_TAIL_BYTE * this.options.tailBytes });
    } catch (error) {
      if (keyed) this.keyed.failed(keyed.handle, error as Error);
      throw error;
    }
    this.records.set(id, record);
    let spawned;
    try {
      const plan = await this.placement.plan({
        id,
        backstopSeconds: deadlineSeconds + this.options.backstopSlackSeconds,
        memoryMaxBytes: checked.memoryMaxBytes,
      });
      record = { ...record, location: plan.location };
      const argv = [
        ...plan.prefix,
        ...wrapperArgv({
          // A PTY task's wrapper runs the holder, which runs the command on its terminal.
          command: checked.pty
            ? holderCommand(checked.command, ptyPaths(paths.dir), checked.pty, { ...process.env, ...checked.env })
            : checked.command,
          enterCgroupProcs: plan.enterCgroupProcs,
          deadlineSeconds,
          graceMs: this.options.graceMs,
          timedOutFile: paths.timedOut,
          trim: maxOutputBytes > 0 ? { script: TRIM_SCRIPT, maxBytes: maxOutputBytes } : null,
        }),
      ];
      spawned = await spawnTask(argv, { cwd: checked.cwd, env: { ...process.env, ...checked.env, ...plan.env }, paths });
    } catch (error) {
      await this.settle(record, { state: "lost", exitCode: null, reason: `spawn failed: ${(error as Error).message}` });
      await this.placement.release(record).catch(() => {});
      if (keyed) this.keyed.failed(keyed.handle, error as Error);
      throw error;
    }
    const live = inspectPid(spawned.pid);
    record = {
      ...record,
      pid: spawned.pid,
      pgid: spawned.pid,
      // A task that already ended has no start time left to read; its exit marker tells the rest.
      startTime: live?.startTime ?? null,
      startedAt: now.toISOString(),
    };
    this.records.set(id, record);
    // `running` is written once, when the process is where it was promised: a supervisor killed before
    // that (with the process still in its cgroup, e.g. systemd-run not yet in its scope) leaves `starting`,
    // which replay reports as a spawn that did not complete, and startup cleanup stops what got through.
    record = { ...(await this.awaitPlaced(record)), state: "running" };
    this.records.set(id, record);
    // Observation starts while the record is being made durable: a task that ends at once is settled
    // meanwhile, and its terminal write queues behind this one (the store keeps one task's writes in
    // order). The caller hears back once it is on disk.
    const written = this.store.write(record);
    this.observe(record, spawned.child);
    await written;
    // Superseded while it was being spawned? The held supersede is carried out now.
    if (keyed) this.keyed.started(keyed.handle, record);
    // From the moment run() returns, a PTY task's terminal takes input and resizes.
    if (checked.pty) await awaitTerminal(ptyPaths(paths.dir), spawned.pid, this.options.ptyReadyMs);
    return record;
  }

  /**
   * Types `data` into a PTY task's terminal (this incarnation's or an adopted
   * one's). Several writers may write; see `writeTerminal` for how they mix.
   */
  async write(id: string, data: string | Uint8Array): Promise<void> {
    const record = this.get(id);
    await writeTerminal(id, terminalOf(record, this.store.paths(id).dir), data);
  }

  /** Sets a PTY task's terminal size; its foreground program gets SIGWINCH. */
  async resize(id: string, cols: number, rows: number): Promise<PtySize> {
    const record = this.get(id);
    return await resizeTerminal(id, terminalOf(record, this.store.paths(id).dir), { cols, rows });
  }

  /** The task as stored now. */
  get(id: string): TaskRecord {
    const record = this.records.get(checkTaskId(id));
    if (!record) throw new OutliveError("E_NO_TASK", `No task ${JSON.stringify(id)} in ${this.store.root}`);
    return record;
  }

  /** The live task that owns `key` now (the newest generation), or null. */
  current(key: string): TaskRecord | null {
    const generation = this.keyed.current(key);
    if (generation === null) return null;
    return this.list().find((r) => r.key === key && r.generation === generation) ?? null;
  }

  /** Every readable task, oldest first. */
  list(): TaskRecord[] {
    return [...this.records.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** Resolves with the terminal record once the task has ended. */
  wait(id: string): Promise<TaskRecord> {
    const record = this.get(id);
    if (isTerminal(record.state)) return Promise.resolve(record);
    const w = this.watched.get(id);
    if (!w) return Promise.reject(new OutliveError("E_NO_TASK", `Task ${id} is not being observed`));
    return new Promise((resolve) => w.waiters.push(resolve));
  }

  /**
   * The kill ladder: SIGTERM to the group, the grace, SIGKILL, then the
   * placement's cgroup kill. A terminal task is returned as it is; two
   * kills at once share one ladder.
   */
  kill(id: string, options: { graceMs?: number; reason?: string; state?: "killed" | "timed_out" } = {}): Promise<KillResult> {
    const record = this.get(id);
    if (isTerminal(record.state)) return Promise.resolve({ record, how: "terminal" });
    try {
      this.assertWritable();
    } catch (error) {
      return Promise.reject(error);
    }
    const running = this.killing.get(id);
    if (running) return running;
    const killing = this.runLadder(record, options).finally(() => this.killing.delete(id));
    this.killing.set(id, killing);
    return killing;
  }

  /**
   * A task's output as it comes: what is on disk from `from` on, then each
   * new write, ending once the task is terminal and read to the end. Chunk
   * offsets are absolute for the task's life, so a follower that stored
   * where it stopped resumes there in the next incarnation, losing and
   * repeating nothing; bytes the output bound dropped first arrive as a
   * chunk with `missed` set. When the supervisor closes first, it fails
   * with `E_CLOSED` rather than end as if the output were complete.
   *
   * @example
   * ```ts
   * import { mkdtempSync, rmSync } from "node:fs";
   * import { tmpdir } from "node:os";
   * import { join } from "node:path";
   * import { Supervisor } from "./supervisor.ts";
   * const storage = mkdtempSync(join(tmpdir(), "outlive-output-example-"));
   * const sup = await Supervisor.open({ storage, maxOutputBytes: 1024 * 1024 });
   * const task = await sup.run({ shell: "echo one; sleep 0.2; echo two" });
   * let next = 0; // store this: the next incarnation passes it as `from`
   * for await (const chunk of sup.output(task.id)) {
   *   process.stdout.write(chunk.data); // one, then two, each on its line
   *   next = chunk.offset + chunk.missed + chunk.data.byteLength;
   * }
   * console.log(next, sup.get(task.id).outputBytes); // 8 { stdout: 8, stderr: 0 }
   * await sup.close();
   * rmSync(storage, { recursive: true });
   * ```
   */
  output(id: string, options: OutputOptions = {}): AsyncIterable<OutputChunk> {
    const request = checkOutputOptions(options);
    this.get(id);
    const closing = this.closing.signal;
    const paths = this.store.paths(id);
    const isDone = () => isTerminal(this.get(id).state);
    async function* follow(): AsyncGenerator<OutputChunk> {
      yield* followOutput({ paths, request, isDone, signal: closing });
      // Ending quietly here would pass a cut-off stream for a whole one.
      if (closing.aborted && !isDone()) {
        throw new OutliveError("E_CLOSED", `The supervisor closed while task ${id} was being followed; resume from the last offset in the next one`);
      }
    }
    return { [Symbol.asyncIterator]: follow };
  }

  /** Every terminal task not yet acknowledged, each once per supervisor life. */
  completions(): AsyncIterable<TaskRecord> {
    return { [Symbol.asyncIterator]: () => this.queue[Symbol.asyncIterator]() };
  }

  /** Marks a completion as received; it is not delivered again, even after a restart. */
  async ack(id: string): Promise<TaskRecord> {
    const record = this.get(id);
    if (!isTerminal(record.state)) {
      throw new OutliveError("E_NO_TASK", `Task ${id} is ${record.state}; only a finished task can be acknowledged`);
    }
    if (record.acknowledgedAt) return record;
    this.assertWritable();
    const acked = { ...record, acknowledgedAt: new Date().toISOString() };
    await this.store.write(acked);
    this.records.set(id, acked);
    this.queue.forget(id);
    this.keepBounded();
    return acked;
  }

  /**
   * Removes finished tasks (record and output) and quarantined records, by
   * id or by their name in `quarantine/`. One live or unknown name, and
   * nothing is removed (E_TASK_LIVE, E_NO_TASK). A crash during it leaves
   * each task whole or gone.
   */
  async remove(ids: string | string[]): Promise<string[]> {
    this.assertOpen();
    this.assertWritable();
    return removeByName(this.retentionHost(), typeof ids === "string" ? [ids] : ids);
  }

  /**
   * Removes finished tasks whose completion was acknowledged, oldest first:
   * those that finished more than `olderThanSeconds` ago (default: any),
   * leaving the newest `keep` (default 0). Then the incarnation files no
   * record needs.
   */
  async prune(rule: { olderThanSeconds?: number; keep?: number } = {}): Promise<PruneResult> {
    this.assertOpen();
    this.assertWritable();
    return prune(this.retentionHost(), normalizePruneRule(rule, "prune", { olderThanSeconds: 0, keep: 0 }), "now");
  }

  /** A supervisor that lives for days prunes by its retention rule as acks come, not only at open. */
  private keepBounded(): void {
    const rule = this.options.retention;
    if (!rule || this.pruning || this.closed) return;
    this.pruning = pruneWhenOver(this.retentionHost(), rule)
      .catch((error) => this.options.log(`pruning by the retention rule failed: ${(error as Error).message}`))
      .finally(() => (this.pruning = null));
  }

  private retentionHost(): RetentionHost {
    return {
      store: this.store,
      records: this.records,
      forget: (id) => this.queue.forget(id),
      liveIncarnations: () => [this.incarnation.id],
      unreadable: () => this.replayReport.unreadable,
      purger: this.purger,
    };
  }

  private controlTarget() {
    return {
      run: (spec: RunSpec) => this.run(spec),
      kill: (id: string, o: { graceMs?: number }) => this.kill(id, o),
      wait: (id: string) => this.wait(id),
      ack: (id: string) => this.ack(id),
      remove: (ids: string[]) => this.remove(ids),
      prune: (rule: { olderThanSeconds?: number; keep?: number }) => this.prune(rule),
      hello: () => ({ pid: this.incarnation.pid, incarnation: this.incarnation.id }),
    };
  }

  /**
   * The daemon says it drains, and why. `restart` and `reload` leave every
   * task running for the next incarnation; `disable` and `shutdown` end them
   * all (ladder, then cgroup kill). Either way the supervisor closes.
   */
  async drain(reason: DrainReason): Promise<void> {
    if (!["restart", "reload", "disable", "shutdown"].includes(reason)) {
      throw new OutliveError("E_BAD_OPTION", `Expected the drain reason to be restart, reload, disable or shutdown, got ${JSON.stringify(reason)}`);
    }
    if (reason === "disable" || reason === "shutdown") await this.stopAll(`stopped: the supervisor was told to ${reason}`);
    await this.close();
  }

  /** Ends every task of this storage, and every unit or cgroup of this prefix whose record is here. */
  async stopAll(reason = "stopped by stop-all"): Promise<TaskRecord[]> {
    this.assertOpen();
    this.assertWritable();
    const live = this.list().filter((r) => !isTerminal(r.state));
    await Promise.all(live.map((r) => this.kill(r.id, { reason }).catch(() => {})));
    await forEachPlacedTask(Object.values(this.placements), this.placement, async (placement, id) => {
      if (this.records.has(id)) await placement.stop(id).catch(() => {});
    });
    return this.list();
  }

  /** Stops observing and gives up the storage; tasks run on. */
  async close(): Promise<void> {
    if (this.closed) return;
    // Requests under way through the control channel finish first (a run, a kill); no new ones are taken.
    const control = this.control;
    this.control = null;
    await control?.close();
    if (this.closed) return;
    this.closed = true;
    this.closing.abort();
    await Promise.allSettled([...this.starting]);
    // A kill asked for before the close is carried out, not dropped: otherwise the next incarnation would
    // adopt the task as running, as if no one had asked. Each ladder is bounded by its grace and the KILL wait.
    await Promise.allSettled([...this.killing.values()]);
    const watches = [...this.watched.values()];
    for (const w of watches) w.stop();
    this.watched.clear();
    // A check that was under way finishes, and every record write lands, before the storage is given up.
    await Promise.allSettled(watches.map((w) => w.idle()));
    await this.pruning;
    await this.purger.stop(CLOSE_PURGE_BUDGET_MS);
    await this.store.flush();
    this.queue.close();
    await Promise.all(Object.values(this.placements).map((p) => p.flush().catch(() => {})));
    if (!this.options.readOnly) await releaseStorageLock(this.store.root, this.incarnation);
  }

  // ---- replay --------------------------------------------------------------

  private async replay(): Promise<void> {
    const { records, unreadable } = await this.store.loadAll();
    for (const r of records) this.records.set(r.id, r);
    this.keyed = new KeyedTasks({
      supersede: (id, by) => {
        void this.kill(id, { reason: `superseded by generation ${by}` }).catch((e) =>
          this.options.log(`ending ${id}, superseded by generation ${by}, failed: ${(e as Error).message}`));
      },
    });
    const report: ReplayReport = { adopted: [], finished: [], unchanged: [], deferred: [], unreadable, cleanedUp: [], foreign: [], unstored: [] };
    if (this.options.readOnly) return this.replayInMemory(records, report);
    this.replayIndex = incarnationIndex(records);
    const items = await replayAll(records, (r) => this.evidence(r), {
      concurrency: this.options.replayConcurrency,
      perTaskMs: this.options.replayPerTaskMs,
    }).finally(() => (this.replayIndex = null));
    const toFinish: Array<{ record: TaskRecord; decision: Extract<ReplayDecision, { kind: "finish" }> }> = [];
    for (const { record, decision } of items) {
      if (decision.kind === "deferred") {
        report.deferred.push({ id: record.id, reason: decision.reason });
        this.options.log(`replay of ${record.id} deferred: ${decision.reason}`);
        // Keep watching it: the next check decides it like any other observation.
        this.observe(record);
      } else if (decision.kind === "unchanged") {
        report.unchanged.push(record.id);
      } else if (decision.kind === "adopt") {
        report.adopted.push(record.id);
        const adopted = decision.found ? await this.recordFound(record, decision.found) : record;
        // Its evidence was gathered just now: until the watchers are in place, only a new exit code needs a look.
        // Another full gathering for each of 1,000 adopted tasks took as long as replay itself (profiled).
        const exit = this.store.paths(adopted.id).exit;
        this.observe(adopted, undefined, () => readExitMarkerNow(exit).kind !== "empty");
        if (decision.resumeKill) void this.kill(record.id, { reason: record.killReason ?? undefined, state: record.killState ?? undefined });
      } else {
        toFinish.push({ record, decision });
      }
    }
    // Tasks that left processes behind are ended one by one; the rest, often thousands after a long outage,
    // are written as one batch: two flushes of the file system instead of two fsyncs a record.
    const batch: TaskRecord[] = [];
    for (const { record, decision } of toFinish) {
      const done = decision.endRemnants ? await this.finish(record, decision) : await this.terminal(record, decision);
      if (done && !decision.endRemnants) batch.push(done);
      if (done) report.finished.push({ id: done.id, state: done.state, exitCode: done.exitCode, reason: done.reason ?? "" });
    }
    await this.store.writeMany(batch);
    for (const done of batch) {
      await this.placements[done.placement].release(done).catch(() => {});
      this.announce(done);
    }
    report.finished.sort((a, b) => a.id.localeCompare(b.id));
    // Keyed tasks take their keys again, oldest generation first, so the newest owns each key.
    const live = this.list().filter((r) => !isTerminal(r.state) && r.key !== null);
    for (const r of live.sort((a, b) => (a.generation ?? 0) - (b.generation ?? 0))) this.keyed.adopt(r);
    // A loop, not Math.max(...all): a storage may hold more records than a call takes arguments.
    let highest = await readGenerationFloor(this.store.root);
    for (const r of this.records.values()) highest = Math.max(highest, r.generation ?? 0);
    this.keyed.reserveThrough(highest);
    for (const record of this.list()) {
      if (isTerminal(record.state) && !record.acknowledgedAt) this.queue.push(record);
    }
    Object.assign(report, await cleanUpAtStartup(Object.values(this.placements), this.placement, this.records));
    this.replayReport = report;
  }

  /**
   * Replay for a read-only view: every decision is made as in a normal
   * replay, held in memory and reported as unstored; nothing is written,
   * signalled, watched or cleaned up.
   */
  private async replayInMemory(records: TaskRecord[], report: ReplayReport): Promise<void> {
    this.replayIndex = incarnationIndex(records);
    const items = await replayAll(records, (r) => this.evidence(r), {
      concurrency: this.options.replayConcurrency,
      perTaskMs: this.options.replayPerTaskMs,
    }).finally(() => (this.replayIndex = null));
    for (const { record, decision } of items) {
      if (decision.kind === "deferred") report.deferred.push({ id: record.id, reason: decision.reason });
      else if (decision.kind === "unchanged") report.unchanged.push(record.id);
      else if (decision.kind === "adopt") {
        report.adopted.push(record.id);
        if (decision.found) {
          const found = decision.found;
          this.records.set(record.id, { ...record, state: "running", pid: found.pid, pgid: found.pid, startTime: found.startTime, location: found.location });
          report.unstored.push({ id: record.id, state: "running", reason: "found running in its own unit or cgroup" });
        }
      } else {
        const done = await this.terminal(record, decision);
        if (!done) continue;
        report.finished.push({ id: done.id, state: done.state, exitCode: done.exitCode, reason: done.reason ?? "" });
        report.unstored.push({ id: done.id, state: done.state, reason: done.reason ?? "" });
      }
    }
    report.finished.sort((a, b) => a.id.localeCompare(b.id));
    this.replayReport = report;
  }

  private assertWritable(): void {
    if (this.options.readOnly) {
      throw new OutliveError("E_READ_ONLY", `This supervisor opened the storage ${this.store.root} read-only; open one without \`readOnly\` to run, kill, acknowledge or remove tasks`);
    }
  }

  private evidence(record: TaskRecord) {
    return gatherEvidence(record, {
      paths: this.store.paths(record.id),
      placement: this.placements[record.placement],
      bootIdNow: this.bootIdNow,
      restartedAt: this.incarnation.startedAt,
      spawnerAlive: (incId) => this.incarnationAlive(incId),
      otherTasks: (r) => this.siblingsOf(r),
      reaped: (r) => this.watched.get(r.id)?.reaped(REAP_WAIT_MS) ?? Promise.resolve(),
    });
  }

  /** The other tasks of the incarnation that spawned `record`, as recorded (pid and start time). */
  private siblingsOf(record: TaskRecord): Array<{ pid: number; startTime: string }> {
    // Replay asks for thousands of records at once: one index for all of them, not a scan each.
    const index = this.replayIndex ?? incarnationIndex(this.records.values());
    return (index.get(record.incarnation) ?? []).filter((r) => r.id !== record.id).map((r) => ({ pid: r.pid!, startTime: r.startTime! }));
  }

  /**
   * Whether an incarnation still runs. A dead one never comes back, so that
   * answer is kept: replay asks it once per task, often of the same few.
   */
  private incarnationAlive(id: string): Promise<boolean | null> {
    if (id === this.incarnation.id) return Promise.resolve(true);
    const known = this.deadIncarnations.get(id) ?? this.askingIncarnations.get(id);
    if (known) return known;
    const answer = loadIncarnation(this.store.root, id).then((inc) => (inc ? incarnationAlive(inc, this.bootIdNow) : null));
    // Replay asks for all of an incarnation's tasks at once: they share the one question under way
    // (1,000 adopted tasks read the same incarnation file 1,000 times, profiled).
    this.askingIncarnations.set(id, answer);
    // The failure (EMFILE reading /proc, say) is the caller's to report; this side branch must not be an unhandled rejection.
    void answer.then((alive) => {
      if (alive === false) this.deadIncarnations.set(id, answer);
    }, () => {}).finally(() => this.askingIncarnations.delete(id));
    return answer;
  }

  /**
   * A task whose spawn was cut short before its pid was recorded, found
   * running in its own unit or cgroup: it is recorded as running, so it is
   * adopted rather than reported lost and stopped.
   */
  private async recordFound(record: TaskRecord, found: { pid: number; startTime: string; location: TaskRecord["location"] }): Promise<TaskRecord> {
    const running: TaskRecord = {
      ...record,
      state: "running",
      pid: found.pid,
      pgid: found.pid,
      startTime: found.startTime,
      startedAt: record.startedAt ?? record.createdAt,
      location: found.location,
    };
    this.records.set(running.id, running);
    await this.store.write(running);
    return running;
  }

  // ---- observation ---------------------------------------------------------

  /** Watches a running task until it ends; every wake decides from fresh evidence. */
  private observe(record: TaskRecord, child?: ChildProcess, firstLook?: () => boolean): void {
    if (this.watched.has(record.id) || this.closed) return;
    const id = record.id;
    this.watched.set(id, new TaskWatch({
      record,
      child,
      ioDir: this.store.paths(id).io,
      placement: this.placements[record.placement],
      livenessIntervalMs: this.options.livenessIntervalMs,
      firstLook,
      check: async () => {
        try {
          const decided = await this.decideNow(id);
          if (decided?.decision.kind === "finish") await this.finish(decided.record, decided.decision);
        } catch (error) {
          this.options.log(`observing ${id} failed: ${(error as Error).message}`);
        }
      },
      onDeadline: () => {
        const current = this.records.get(id);
        if (!current || isTerminal(current.state) || current.state === "killing") return;
        const limit = current.deadlineIsTimeout ? `its timeout of ${current.timeoutSeconds} s` : `the ceiling of ${this.options.ceilingSeconds} s`;
        void this.kill(id, { reason: `timed out: it ran past ${limit}`, state: "timed_out" }).catch((e) =>
          this.options.log(`kill of ${id} at its deadline failed: ${(e as Error).message}`));
      },
    }));
  }

  /**
   * Waits (bounded) until the new process is in its cgroup or unit, and
   * returns the record with where that is. A task that never gets there is
   * ended: it must not run outside the cgroup it was promised.
   */
  private async awaitPlaced(record: TaskRecord): Promise<TaskRecord> {
    const placement = this.placements[record.placement];
    const deadline = Date.now() + 10_000;
    for (;;) {
      const live = inspectPid(record.pid!);
      if (!live || live.startTime !== record.startTime) return record; // already over; its marker tells the rest
      if (placement.identify(record, live)) {
        return { ...record, location: await placement.started(record, live) };
      }
      if (Date.now() > deadline) {
        signalGroup(record.pgid!, "SIGKILL");
        await placement.killAll(record).catch(() => {});
        const reason = `spawn did not complete: the process never appeared in its ${placement.name} placement within 10 s`;
        await this.settle(record, { state: "lost", exitCode: null, reason });
        throw new OutliveError("E_SPAWN", `Task ${record.id}: ${reason}`);
      }
      await new Promise((r) => setTimeout(r, 2));
    }
  }

  /**
   * Decides a task from fresh evidence. The record may change while the
   * evidence is gathered (a kill begins): then the evidence is gathered
   * again, so a decision never pairs new evidence with an old record.
   * Null when the task is terminal already.
   */
  private async decideNow(id: string): Promise<{ record: TaskRecord; decision: ReplayDecision } | null> {
    for (;;) {
      const before = this.records.get(id);
      if (!before || isTerminal(before.state)) return null;
      const evidence = await this.evidence(before);
      const after = this.records.get(id);
      if (after === before) return { record: before, decision: decideReplay(before, evidence) };
    }
  }

  // ---- kill and settle -----------------------------------------------------

  private async runLadder(record: TaskRecord, options: { graceMs?: number; reason?: string; state?: "killed" | "timed_out" }): Promise<KillResult> {
    const placement = this.placements[record.placement];
    if (record.state !== "killing") {
      // An exit code already written wins over the kill: the task ended on its own first.
      if ((await readExitMarker(this.store.paths(record.id).exit)).kind === "code") {
        return { record: await this.settleAfterKill(record.id), how: "already-gone" };
      }
      if (pidEvidence(record, placement) === "reused") {
        // Never signal a pid that is someone else's now; only the task's own cgroup may still be ended.
        const done = await this.finish(record, {
          kind: "finish",
          state: "lost",
          exitCode: null,
          reason: `pid reused: pid ${record.pid} belongs to another process now, which was not signalled; the task ended without an exit code`,
          endRemnants: false,
        });
        await placement.killAll(record).catch(() => {});
        return { record: done, how: "pid-reused" };
      }
      record = {
        ...record,
        state: "killing",
        killStartedAt: new Date().toISOString(),
        killReason: options.reason ?? "killed by request",
        killState: options.state ?? "killed",
      };
      // Written before the first signal, and only after the marker was seen empty: any exit code that appears from now on is the kill's.
      await this.store.write(record);
      this.records.set(record.id, record);
    }
    let how: KillHow;
    if (record.pid === null || record.pgid === null || record.startTime === null) {
      await placement.killAll(record);
      how = "already-gone";
    } else {
      how = await killLadder(
        { pid: record.pid, pgid: record.pgid, startTime: record.startTime },
        {
          graceMs: options.graceMs ?? this.options.graceMs,
          killAll: () => placement.killAll(record),
          ownsGroup: (members) => this.ownsGroup(record, members),
        },
      );
    }
    const final = await this.settleAfterKill(record.id);
    return { record: final, how };
  }

  /** After a ladder the task is gone: decide its end now rather than on the next wake. */
  private async settleAfterKill(id: string): Promise<TaskRecord> {
    await this.watched.get(id)?.idle();
    const decided = await this.decideNow(id);
    if (decided?.decision.kind === "finish") return this.finish(decided.record, decided.decision);
    // Terminal already, or still alive after SIGKILL and the cgroup kill: the record says which, truthfully.
    return this.records.get(id)!;
  }

  /**
   * Is a group whose leader is gone still this task's? Some member must be
   * in the task's cgroup or unit. A plain process group shares the
   * supervisor's cgroup and so proves little; cgroup placements prove it.
   */
  private ownsGroup(record: TaskRecord, members: number[]): boolean {
    const placement = this.placements[record.placement];
    return members.some((pid) => {
      const live = inspectPid(pid);
      return live !== null && placement.identify(record, live);
    });
  }

  private async finish(record: TaskRecord, decision: Extract<ReplayDecision, { kind: "finish" }>): Promise<TaskRecord> {
    const placement = this.placements[record.placement];
    if (decision.endRemnants) {
      if (record.pgid !== null && inspectPid(record.pgid) === null) {
        const members = liveGroupMembers(record.pgid);
        if (members?.length && this.ownsGroup(record, members)) signalGroup(record.pgid, "SIGKILL");
      }
      await placement.killAll(record).catch(() => {});
    }
    // The release starts (and registers its clean-up with the placement) before the end is announced, so a
    // close that follows the announcement at once waits for it; the announcement does not wait for it.
    const releasing = placement.release(record).catch(() => {});
    const done = await this.settle(record, decision);
    await releasing;
    return done;
  }

  /** The one place a record becomes terminal: exactly once, with its output summary, then delivered. */
  private async settle(record: TaskRecord, end: TaskEnd): Promise<TaskRecord> {
    const done = await this.terminal(record, end);
    if (!done) return this.records.get(record.id)!;
    await this.store.write(done);
    this.announce(done);
    return done;
  }

  /**
   * Makes (and holds in memory) the terminal record for an end; null when
   * the task is terminal already. It is on disk only once written.
   */
  private async terminal(record: TaskRecord, end: TaskEnd): Promise<TaskRecord | null> {
    const current = this.records.get(record.id);
    if (current && isTerminal(current.state)) return null;
    const output = await summarizeOutput(this.store.paths(record.id), this.options.tailBytes);
    const full = output.lastOutputAt !== null && fileSystemFull(this.store.root);
    const done: TaskRecord = {
      ...(current ?? record),
      state: end.state,
      exitCode: end.exitCode,
      reason: `${end.reason}${fullDiskWords(full, this.store.root)}`,
      finishedAt: new Date().toISOString(),
      lastOutputAt: output.lastOutputAt,
      outputTail: output.tail,
      outputBytes: { stdout: output.stdoutBytes, stderr: output.stderrBytes },
    };
    this.records.set(done.id, done);
    return done;
  }

  /** A terminal record is on disk: stop watching, answer waiters, deliver the completion, free the key. */
  private announce(done: TaskRecord): void {
    const w = this.watched.get(done.id);
    if (w) {
      w.stop();
      this.watched.delete(done.id);
      for (const resolve of w.waiters) resolve(done);
    }
    this.queue.push(done);
    this.keyed.ended(done);
  }

  private assertOpen(): void {
    if (this.closed) throw new OutliveError("E_CLOSED", "This supervisor was closed; open a new one");
  }
}

/** Records with a recorded process, by the incarnation that spawned them. */
function incarnationIndex(records: Iterable<TaskRecord>): Map<string, TaskRecord[]> {
  const index = new Map<string, TaskRecord[]>();
  for (const r of records) {
    if (r.pid === null || r.startTime === null || isTerminal(r.state)) continue;
    const list = index.get(r.incarnation);
    if (list) list.push(r);
    else index.set(r.incarnation, [r]);
  }
  return index;
}
