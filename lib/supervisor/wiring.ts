import { TaskEnder } from "../end/end-tasks.ts";
import { KeyedTasks } from "../generation/keyed-tasks.ts";
import { type KillRequest, type KillResult, TaskKills } from "../kill/task-kills.ts";
import { Sightings } from "../observe/sightings.ts";
import { Watches } from "../observe/watches.ts";
import type { Placement } from "../placement/placement.ts";
import { EvidenceSource } from "../replay/evidence-source.ts";
import { Retainer } from "../retention/retainer.ts";
import { createHash } from "node:crypto";
import { SpawnerClient } from "../spawner/spawner-client.ts";
import { TaskStarter } from "../start/start-task.ts";
import { storagePaths } from "../store/layout.ts";
import type { Incarnation } from "../store/storage/incarnation.ts";
import { isTerminal, type PlacementName } from "../store/record/record.ts";
import type { TaskStore, UnreadableTask } from "../store/task-store.ts";
import { TaskTable } from "../store/task-table.ts";
import { CompletionQueue } from "./completion-queue.ts";
import type { TaskStep } from "../start/task-steps.ts";
import type { NormalizedOptions } from "./options.ts";
import { ReadyWatches } from "../ready/ready-watches.ts";
import { portsOfTasks } from "../ports/task-ports.ts";
import { Ensurer } from "../start/ensure.ts";
import { readAttempts } from "../observe/attempts.ts";
import type { TaskRecord } from "../store/record/record.ts";

/** How long a check of a task that has written its exit code waits for this process to reap its wrapper (see TaskWatch.reaped). */
const REAP_WAIT_MS = 1000;
/** How long replay waits on a spawn the spawner still has under way for a `starting` record. */
const SETTLE_WAIT_MS = 15_000;
/** How long a new spawner may take to come up (a Deno one compiles its program first). */
const SPAWNER_START_MS = 20_000;

/** The parts a supervisor is made of, each owning its state. */
export interface SupervisorParts {
  /** The records held, claimed apart from committed. */
  table: TaskTable;
  /** Terminal tasks waiting for the owner. */
  queue: CompletionQueue;
  /** One task per key. */
  keyed: KeyedTasks;
  watches: Watches;
  evidence: EvidenceSource;
  ender: TaskEnder;
  kills: TaskKills;
  starter: TaskStarter;
  retainer: Retainer;
  /** Forks tasks from outside this process's cgroup; null where tasks are forked here (see SupervisorOptions.spawner). */
  spawner: SpawnerClient | null;
  /** The live tasks whose readiness is still to be seen, and who waits for it. */
  ready: ReadyWatches;
  /** `run` with `ensure`: one task per key and spec. */
  ensurer: Ensurer;
}

export interface WiringContext {
  options: NormalizedOptions;
  store: TaskStore;
  incarnation: Incarnation;
  bootId: string;
  placements: Record<PlacementName, Placement>;
  /** The placement new tasks get. */
  placement: Placement;
  /** The supervisor's own kill (checked at its door): a superseded task and a resumed kill go through it. */
  kill(id: string, request: KillRequest): Promise<KillResult>;
  /** What replay left unreadable, for retention. */
  unreadable(): readonly UnreadableTask[];
}

/**
 * Makes the parts and wires their hooks to each other, which cuts the call
 * cycles between them: a watch's check asks the evidence and ends through
 * the ender; a kill decides through the evidence and ends through the
 * ender; an end stops the watch, queues the completion and frees the key.
 */
export function wireSupervisor(ctx: WiringContext): SupervisorParts {
  const { options, store, incarnation, placements } = ctx;
  const log = options.log;
  const step = (id: string, name: TaskStep) => {
    try {
      options.onStep(id, name, performance.now());
    } catch (error) {
      // A listener's fault must not stop a start or an end half-way.
      log(`onStep threw at ${name} of ${id}: ${(error as Error).message}`);
    }
  };
  const spawner = makeSpawner(ctx);
  const table = new TaskTable();
  const queue = new CompletionQueue();
  const sightings = new Sightings();
  const keyed = new KeyedTasks({
    supersede: (id, by) => {
      void ctx.kill(id, { reason: `superseded by generation ${by}` }).catch((e) =>
        log(`ending ${id}, superseded by generation ${by}, failed: ${(e as Error).message}`));
    },
  });
  const watches: Watches = new Watches({
    placements,
    ioDir: (id) => store.paths(id).io,
    livenessIntervalMs: options.livenessIntervalMs,
    check: async (id) => {
      try {
        const decided = await evidence.decideNow(id);
        if (decided?.decision.kind === "finish") {
          step(id, "decided");
          await ender.endOne(decided.record, decided.decision, decided.decision.endRemnants);
        } else {
          await noteAttempts(id);
        }
      } catch (error) {
        log(`observing ${id} failed: ${(error as Error).message}`);
      }
    },
    deadline: (id) => kills.atDeadline(id),
    emptied: (id, at) => sightings.emptied(id, at),
  });
  const evidence = new EvidenceSource({
    table, store, placements, bootIdNow: ctx.bootId, incarnation,
    reaped: (r) => watches.reaped(r.id, REAP_WAIT_MS),
    sightings,
    settleSpawn: spawner ? (id) => spawner.settle(id, SETTLE_WAIT_MS) : null,
  });
  /** A task under a restart policy started its command again: its record says how often, and the command's new pid. */
  const noteAttempts = async (id: string) => {
    const current = table.get(id);
    if (!current?.restart || isTerminal(current.state)) return;
    const seen = readAttempts(store.paths(id).attempts);
    if (!seen || (seen.restarts === (current.restarts ?? 0) && (seen.commandPid === null || seen.commandPid === current.commandPid))) return;
    const updated: TaskRecord = { ...current, restarts: seen.restarts, ...(seen.commandPid === null ? {} : { commandPid: seen.commandPid }) };
    if (!table.claim(updated)) return;
    await store.write(updated);
    table.landed(updated);
  };
  const ready: ReadyWatches = new ReadyWatches({
    paths: (id) => store.paths(id),
    get: (id) => table.get(id),
    ports: (record) => portsOfTasks([record]).get(record.id) ?? [],
    tailBytes: options.tailBytes,
    mark: async (id, at, source) => {
      const current = table.get(id);
      if (!current || isTerminal(current.state) || current.readyAt) return current ?? null;
      const updated: TaskRecord = { ...current, readyAt: at.toISOString(), readyAtSource: source };
      if (!table.claim(updated)) return table.get(id) ?? null;
      try {
        await store.write(updated);
        table.landed(updated);
      } catch (error) {
        log(`recording ${id}'s readiness failed: ${(error as Error).message}`);
      }
      return table.get(id) ?? null;
    },
  });
  const ender = new TaskEnder({
    table, store, placements, tailBytes: options.tailBytes,
    written: (done) => step(done.id, "ended"),
    ended: (done) => {
      sightings.forget(done.id);
      watches.ended(done);
      ready.ended(done);
      queue.push(done);
      keyed.ended(done);
    },
  });
  const kills: TaskKills = new TaskKills({
    table, store, placements, graceMs: options.graceMs, ceilingSeconds: options.ceilingSeconds, log,
    decideNow: (id) => evidence.decideNow(id),
    end: (record, end) => ender.endOne(record, end, end.endRemnants),
    idle: (id) => watches.idle(id),
    sighted: (id, look) => (look.alive ? sightings.alive(id, look.at) : sightings.gone(id, look.at)),
  });
  const starter = new TaskStarter({
    table, store, placement: ctx.placement, keyed, incarnation, bootId: ctx.bootId, limits: options,
    end: (record, end) => ender.endOne(record, end),
    watch: (record, child) => {
      watches.watch(record, child ?? undefined);
      ready.watch(record, false);
    },
    step,
    spawner,
    shim: options.shim.path,
    // Each running task's shim is taken to hold an instance (adopted ones too), so the user's own watchers keep the rest.
    // Asked once the new task's `starting` record is in the table, so the count includes it: at most inotifyTasks.
    outputWatch: () => (liveTasks(table) <= options.inotifyTasks ? "inotify" : "poll"),
  });
  const retainer = new Retainer({
    store, table, rule: options.retention, log,
    forget: (id) => queue.forget(id),
    liveIncarnations: () => [incarnation.id],
    unreadable: () => ctx.unreadable(),
  });
  const ensurer = new Ensurer({
    current: (key) => {
      const generation = keyed.current(key);
      if (generation === null) return null;
      for (const r of table.values()) if (r.key === key && r.generation === generation) return r;
      return null;
    },
    startingUnder: (key) => starter.startingUnder(key),
    start: (spec) => starter.start(spec),
  });
  return { table, queue, keyed, watches, evidence, ender, kills, starter, retainer, spawner, ready, ensurer };
}

/** How many tasks this supervisor holds that have not ended. */
function liveTasks(table: TaskTable): number {
  let n = 0;
  for (const r of table.values()) if (!isTerminal(r.state)) n++;
  return n;
}

/** The spawner of this storage, where the placement has a home for it and the options want one. */
function makeSpawner(ctx: WiringContext): SpawnerClient | null {
  const { options, store, placement } = ctx;
  if (!options.spawner || options.readOnly) return null;
  const key = createHash("sha256").update(store.root).digest("hex").slice(0, 12);
  const home = placement.spawnerHome(key);
  if (!home) return null;
  try {
    return new SpawnerClient({
      home, dir: storagePaths(store.root).spawner, idleMs: options.spawnerIdleMs, startWithinMs: SPAWNER_START_MS, log: options.log,
    });
  } catch (error) {
    // A storage path too long for a socket: tasks are forked here, and the log says so.
    options.log(`no spawner: ${(error as Error).message}; tasks are forked by the supervisor itself`);
    return null;
  }
}
