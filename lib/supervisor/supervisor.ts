import type { DrainReason } from "../drain-reason.ts";
import { OutliveError } from "../errors.ts";
import type { KeyedTasks } from "../generation/keyed-tasks.ts";
import type { KillRequest, KillResult } from "../kill/task-kills.ts";
import { followOutput } from "../output/follow.ts";
import { checkOutputOptions, type OutputChunk, type OutputOptions } from "../output/request.ts";
import { choosePlacement, makePlacements } from "../placement/choose.ts";
import type { Placement } from "../placement/placement.ts";
import { bootId } from "../proc/boot-id.ts";
import { resizeTerminal, terminalOf, writeTerminal, type PtySize } from "../pty/mod.ts";
import { replayAtOpen, type ReplayReport } from "../replay/replay-at-open.ts";
import { SocketServer } from "../control/socket-server.ts";
import { readGenerationFloor } from "../retention/generation-floor.ts";
import type { PruneResult } from "../retention/retention.ts";
import { checkRunSpec, type RunSpec } from "../start/run-spec.ts";
import type { RunResult } from "../start/ensure.ts";
import type { ListeningPort } from "../ports/proc-net.ts";
import { portsOfTasks } from "../ports/task-ports.ts";
import { outliveVersion } from "../version.ts";
import { currentIncarnation, type Incarnation, saveIncarnation } from "../store/storage/incarnation.ts";
import { isTerminal, type PlacementName, type TaskRecord } from "../store/record/record.ts";
import { acquireStorageLock, releaseStorageLock } from "../store/storage/storage-lock.ts";
import { checkTaskId } from "../store/record/task-id.ts";
import { TaskStore } from "../store/task-store.ts";
import type { TaskTable } from "../store/task-table.ts";
import type { CompletionSubscription } from "./completion-feed.ts";
import type { CompletionQueue } from "./completion-queue.ts";
import { type NormalizedOptions, normalizeOptions, type SupervisorOptions } from "./options.ts";
import { type SupervisorParts, wireSupervisor } from "./wiring.ts";
import { cleanUpAtStartup, forEachPlacedTask, listPlacedTasks } from "./startup-cleanup.ts";

export type { KillResult } from "../kill/task-kills.ts";
export type { ReplayReport } from "../replay/replay-at-open.ts";
export type { EnsureOutcome, RunResult } from "../start/ensure.ts";
export type { ListeningPort } from "../ports/proc-net.ts";

/** Why the supervisor is draining: the daemon's word for it. */
export type { DrainReason };

/**
 * Runs background tasks that outlive this process, and tells the truth
 * about them after a restart. Open one per storage; a second live one is refused.
 *
 * It only wires the parts that do the work: the task table (lib/store),
 * starting (lib/start), ending (lib/end), kills (lib/kill), watches
 * (lib/observe), evidence and replay (lib/replay), retention and control.
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

  private readonly table: TaskTable;
  private readonly queue: CompletionQueue;
  private readonly keyed: KeyedTasks;
  private readonly parts: SupervisorParts;
  private readonly bootIdNow = bootId();
  private control: SocketServer | null = null;
  private closed = false;
  /** Whether close leaves the spawner running for the next incarnation (a drain for a restart or reload). */
  private keepSpawner = false;
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
    // Which process each task runs under is the other half of what a task survives and costs: say it beside the placement.
    this.placementReason = `${chosen.reason}; tasks run under ${options.shim.why}`;
    this.parts = wireSupervisor({
      options, store, incarnation, placements, placement: chosen.placement, bootId: this.bootIdNow,
      kill: (id, request) => this.kill(id, request),
      unreadable: () => this.replayReport.unreadable,
    });
    ({ table: this.table, queue: this.queue, keyed: this.keyed } = this.parts);
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
        sup.retainedAtOpen = { removed: [], incarnationsRemoved: 0, keptUnacknowledged: 0 };
        return sup;
      }
      sup.retainedAtOpen = await sup.parts.retainer.atOpen();
      if (options.control) sup.control = await SocketServer.start(sup, { version: outliveVersion(), log: options.log, maxLineBytes: options.maxLineBytes });
      return sup;
    } catch (error) {
      // What a failed open started ends with it: the watches of tasks replay had adopted would otherwise
      // keep the process alive, and write records after the lock was given up (found at 2 free descriptors).
      await sup?.close().catch(() => {});
      if (!options.readOnly) await releaseStorageLock(store.root, incarnation);
      throw error;
    }
  }

  /**
   * Starts a task and resolves once it runs (in its cgroup, when it has
   * one); with `waitReady`, once it is ready. With `ensure` (and `key`), a
   * live task of the same spec under the key is the answer instead, and
   * `ensured` says whether it was kept, replaced or started.
   *
   * @example
   * ```ts
   * import { mkdtempSync, rmSync } from "node:fs";
   * import { tmpdir } from "node:os";
   * import { join } from "node:path";
   * import { Supervisor } from "./supervisor.ts";
   * const storage = mkdtempSync(join(tmpdir(), "outlive-ready-example-"));
   * const sup = await Supervisor.open({ storage });
   * const spec = { key: "web", ensure: true, argv: ["python3", "-m", "http.server", "8731", "--bind", "127.0.0.1"], readyPort: 8731, waitReady: true };
   * const web = await sup.run(spec);
   * console.log(web.readyAt !== null, web.readyAtSource, sup.ports([web]).get(web.id)); // true "probe" [{ proto: "tcp", address: "127.0.0.1", port: 8731 }]
   * const again = await sup.run(spec);
   * console.log(again.id === web.id, again.ensured); // true { outcome: "kept", replaced: null, differs: [] }
   * await sup.kill(web.id);
   * await sup.close();
   * rmSync(storage, { recursive: true });
   * ```
   */
  async run(spec: RunSpec): Promise<RunResult> {
    this.assertOpen();
    this.assertWritable();
    const checked = checkRunSpec(spec, this.options);
    const withOrigin = this.options.origin ? { ...checked, origin: this.options.origin } : checked;
    const result: RunResult = withOrigin.ensure && withOrigin.key !== null
      ? await this.parts.ensurer.ensure({ ...withOrigin, key: withOrigin.key })
      : await this.parts.starter.start(withOrigin);
    if (!checked.waitReady) return result;
    const ready = await this.parts.ready.waitReady(result.id);
    return result.ensured ? { ...ready, ensured: result.ensured } : ready;
  }

  /**
   * Resolves with the task's record once it is ready (its `readyLog`,
   * `readyPort` and `readyHttp` conditions all held); rejects with
   * E_NOT_READY when it ends first or its ready timeout passes (the task
   * runs on; the error's message says its state, reason and last output,
   * and its `task` is the record).
   */
  waitReady(id: string): Promise<TaskRecord> {
    this.get(id);
    return this.parts.ready.waitReady(id);
  }

  /** Hears each task that becomes ready while subscribed (the wire's `ready` notification); returns the unsubscribe. */
  subscribeReady(listener: (record: TaskRecord) => void): () => void {
    return this.parts.ready.subscribe(listener);
  }

  /**
   * Every listening TCP and bound UDP socket of each live task's processes
   * (its whole cgroup, or its group and the leader's descendants), read from
   * /proc now; finished tasks have none.
   */
  ports(records: readonly TaskRecord[]): Map<string, ListeningPort[]> {
    return portsOfTasks(records.filter((r) => !isTerminal(r.state)));
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
    const record = this.table.get(checkTaskId(id));
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
    return this.table.list();
  }

  /** Resolves with the terminal record once the task has ended. */
  wait(id: string): Promise<TaskRecord> {
    const record = this.get(id);
    if (isTerminal(record.state)) return Promise.resolve(record);
    return this.parts.watches.ending(id) ?? Promise.reject(new OutliveError("E_NO_TASK", `Task ${id} is not being observed`));
  }

  /**
   * The kill ladder: SIGTERM to the group, the grace, SIGKILL, then the
   * placement's cgroup kill. A terminal task is returned as it is; two
   * kills at once share one ladder.
   */
  kill(id: string, options: KillRequest = {}): Promise<KillResult> {
    const record = this.get(id);
    if (isTerminal(record.state)) return Promise.resolve({ record, how: "terminal" });
    try {
      this.assertWritable();
    } catch (error) {
      return Promise.reject(error);
    }
    return this.parts.kills.kill(record, options);
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

  /**
   * Every terminal task not yet acknowledged, for this subscriber alone:
   * each subscription gets each of them once (those that ended before it
   * subscribed too), unlike `completions()`, which hands each to one
   * iterator. An `ack` takes the task out of every subscription.
   */
  subscribeCompletions(): CompletionSubscription {
    this.assertOpen();
    return this.queue.subscribe();
  }

  /** Marks a completion as received; it is not delivered again, even after a restart. */
  async ack(id: string): Promise<TaskRecord> {
    const record = this.get(id);
    if (!isTerminal(record.state)) {
      throw new OutliveError("E_TASK_LIVE", `Task ${id} is ${record.state}; only a finished task can be acknowledged`);
    }
    if (record.acknowledgedAt) return record;
    this.assertWritable();
    const acked = { ...record, acknowledgedAt: new Date().toISOString() };
    // On disk first: a failed write never shows as acknowledged.
    await this.store.write(acked);
    this.table.commit(acked);
    this.queue.forget(id);
    this.parts.retainer.acknowledged();
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
    return this.parts.retainer.remove(typeof ids === "string" ? [ids] : ids);
  }

  /**
   * Removes finished tasks whose completion was acknowledged, oldest first:
   * those that finished more than `olderThanSeconds` ago (default: any),
   * leaving the newest `keep` (default 0). Then the incarnation files no
   * record needs.
   */
  async prune(rule: { olderThanSeconds?: number; keep?: number; unacknowledged?: boolean } = {}): Promise<PruneResult> {
    this.assertOpen();
    this.assertWritable();
    return this.parts.retainer.prune(rule);
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
    // A restart's next incarnation finds the spawner again; any other end ends it.
    this.keepSpawner = reason === "restart" || reason === "reload";
    await this.close();
  }

  /** Ends every task of this storage, and every unit or cgroup of this prefix whose record is here. */
  async stopAll(reason = "stopped by stop-all"): Promise<TaskRecord[]> {
    this.assertOpen();
    this.assertWritable();
    const live = this.list().filter((r) => !isTerminal(r.state));
    await Promise.all(live.map((r) => this.kill(r.id, { reason }).catch(() => {})));
    await forEachPlacedTask(Object.values(this.placements), this.placement, async (placement, id) => {
      if (this.table.has(id)) await placement.stop(id).catch(() => {});
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
    await this.parts.starter.settled();
    // No spawn is under way any more: the spawner is left for the next incarnation, or ended.
    const spawner = this.parts.spawner;
    if (spawner && this.keepSpawner) spawner.detach();
    else await spawner?.end().catch((error) => this.options.log(`ending the spawner failed: ${(error as Error).message}`));
    // A kill asked for before the close is carried out, not dropped: otherwise the next incarnation would
    // adopt the task as running, as if no one had asked. Each ladder is bounded by its grace and the KILL wait.
    await this.parts.kills.settled();
    // A check that was under way finishes, and every record write lands, before the storage is given up.
    await this.parts.ready.close();
    await this.parts.watches.close();
    await this.parts.retainer.close();
    await this.store.flush();
    this.queue.close();
    await Promise.all(Object.values(this.placements).map((p) => p.flush().catch(() => {})));
    if (!this.options.readOnly) await releaseStorageLock(this.store.root, this.incarnation);
  }

  /** Replay at open, then: keys taken again, generations resumed, completions queued, leftovers cleaned up. */
  private async replay(): Promise<void> {
    // Listed while replay runs (some 10 ms a restart in the container); only the records, decided after, say what is stopped.
    const placed = this.options.readOnly ? null : listPlacedTasks(Object.values(this.placements), this.placement).catch(() => []);
    const { records, unreadable, cutShort } = await this.store.loadAll();
    for (const id of cutShort) {
      this.options.log(`task ${id}: its creation was cut short before its first record was in place (a power cut): no process was started, its directory is removed`);
    }
    this.table.load(records);
    const apply = !this.options.readOnly;
    this.replayReport = await replayAtOpen(records, unreadable, {
      table: this.table,
      store: this.store,
      evidence: this.parts.evidence,
      concurrency: this.options.replayConcurrency,
      perTaskMs: this.options.replayPerTaskMs,
      apply,
      log: this.options.log,
      end: (items, how) => this.parts.ender.end(items, how),
      watch: (record, firstLook) => {
        this.parts.watches.watch(record, undefined, firstLook);
        if (apply) this.parts.ready.watch(record, true);
      },
      resumeKill: (r) => void this.kill(r.id, { reason: r.killReason ?? undefined, state: r.killState ?? undefined }),
    });
    if (!apply) return;
    // Keyed tasks take their keys again, oldest generation first, so the newest owns each key.
    const live = this.list().filter((r) => !isTerminal(r.state) && r.key !== null);
    for (const r of live.sort((a, b) => (a.generation ?? 0) - (b.generation ?? 0))) this.keyed.adopt(r);
    // A loop, not Math.max(...all): a storage may hold more records than a call takes arguments.
    let highest = await readGenerationFloor(this.store.root);
    for (const r of this.table.values()) highest = Math.max(highest, r.generation ?? 0);
    this.keyed.reserveThrough(highest);
    for (const record of this.list()) {
      if (isTerminal(record.state) && !record.acknowledgedAt) this.queue.push(record);
    }
    Object.assign(this.replayReport, await cleanUpAtStartup(await placed!, this.table));
  }

  private assertWritable(): void {
    if (this.options.readOnly) {
      throw new OutliveError("E_READ_ONLY", `This supervisor opened the storage ${this.store.root} read-only; open one without \`readOnly\` to run, kill, acknowledge or remove tasks`);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new OutliveError("E_CLOSED", "This supervisor was closed; open a new one");
  }
}
