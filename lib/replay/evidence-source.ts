import type { Sightings } from "../observe/sightings.ts";
import type { Placement } from "../placement/placement.ts";
import { type Incarnation, incarnationAlive, loadIncarnation } from "../store/storage/incarnation.ts";
import { isTerminal, type PlacementName, type TaskRecord } from "../store/record/record.ts";
import type { TaskStore } from "../store/task-store.ts";
import type { TaskTable } from "../store/task-table.ts";
import { decideReplay, type ReplayDecision, type ReplayEvidence } from "./decide.ts";
import { gatherEvidence } from "./evidence.ts";
import type { SettleAnswer } from "../spawner/protocol.ts";

export interface EvidenceSourceOptions {
  table: TaskTable;
  store: TaskStore;
  placements: Record<PlacementName, Placement>;
  bootIdNow: string;
  /** This process's incarnation: alive by definition. */
  incarnation: Incarnation;
  /** Resolves once this process reaped the task's wrapper, when it is its child (bounded). */
  reaped(record: TaskRecord): Promise<void>;
  /** What this process saw of its tasks alive and gone, for dating their ends. */
  sightings?: Sightings;
  /** What the storage's spawner did with a task id's request (see EvidenceContext.settleSpawn). */
  settleSpawn?: ((id: string) => Promise<SettleAnswer | null>) | null;
}

/**
 * Gathers a task's evidence (the I/O half of a decision) and decides from
 * it, for replay and for every live check alike. It keeps what a thousand
 * questions share: which incarnations are dead (they never come back), the
 * answers under way, and during replay one index of each incarnation's tasks.
 */
export class EvidenceSource {
  private readonly dead = new Map<string, Promise<boolean | null>>();
  /** Answers under way, shared by everyone asking meanwhile. */
  private readonly asking = new Map<string, Promise<boolean | null>>();
  private index: Map<string, TaskRecord[]> | null = null;

  constructor(private readonly o: EvidenceSourceOptions) {}

  gather(record: TaskRecord): Promise<ReplayEvidence> {
    return gatherEvidence(record, {
      paths: this.o.store.paths(record.id),
      placement: this.o.placements[record.placement],
      bootIdNow: this.o.bootIdNow,
      restartedAt: this.o.incarnation.startedAt,
      spawnerAlive: (incId) => this.incarnationAlive(incId),
      otherTasks: (r) => this.siblingsOf(r),
      reaped: (r) => this.o.reaped(r),
      sightings: this.o.sightings,
      settleSpawn: this.o.settleSpawn,
    });
  }

  /**
   * Decides a task from fresh evidence. The record may change while the
   * evidence is gathered (a kill begins): then the evidence is gathered
   * again, so a decision never pairs new evidence with an old record.
   * Null when the task is terminal already.
   */
  async decideNow(id: string): Promise<{ record: TaskRecord; decision: ReplayDecision } | null> {
    const table = this.o.table;
    for (;;) {
      const before = table.get(id);
      if (!before || isTerminal(before.state)) return null;
      const version = table.version(id);
      const evidence = await this.gather(before);
      if (table.version(id) === version) return { record: before, decision: decideReplay(before, evidence) };
    }
  }

  /** Runs `work` (replay of `records`) with one index of their incarnations, not a scan of the table per record. */
  async indexed<T>(records: readonly TaskRecord[], work: () => Promise<T>): Promise<T> {
    this.index = incarnationIndex(records);
    try {
      return await work();
    } finally {
      this.index = null;
    }
  }

  /** The other tasks of the incarnation that spawned `record`, as recorded (pid and start time). */
  private siblingsOf(record: TaskRecord): Array<{ pid: number; startTime: string }> {
    const index = this.index ?? incarnationIndex(this.o.table.values());
    return (index.get(record.incarnation) ?? []).filter((r) => r.id !== record.id).map((r) => ({ pid: r.pid!, startTime: r.startTime! }));
  }

  /**
   * Whether an incarnation still runs. A dead one never comes back, so that
   * answer is kept: replay asks it once per task, often of the same few.
   */
  private incarnationAlive(id: string): Promise<boolean | null> {
    if (id === this.o.incarnation.id) return Promise.resolve(true);
    const known = this.dead.get(id) ?? this.asking.get(id);
    if (known) return known;
    const answer = loadIncarnation(this.o.store.root, id).then((inc) => (inc ? incarnationAlive(inc, this.o.bootIdNow) : null));
    // Replay asks for all of an incarnation's tasks at once: they share the one question under way
    // (1,000 adopted tasks read the same incarnation file 1,000 times, profiled).
    this.asking.set(id, answer);
    // The failure (EMFILE reading /proc, say) is the caller's to report; this side branch must not be an unhandled rejection.
    void answer.then((alive) => {
      if (alive === false) this.dead.set(id, answer);
    }, () => {}).finally(() => this.asking.delete(id));
    return answer;
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
