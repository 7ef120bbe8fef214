import { readExitMarker } from "../observe/exit-marker.ts";
import type { Placement } from "../placement/placement.ts";
import { pidEvidence } from "../replay/evidence.ts";
import type { ReplayDecision } from "../replay/decide.ts";
import type { PlacementName, TaskRecord } from "../store/record/record.ts";
import type { TaskStore } from "../store/task-store.ts";
import type { TaskTable } from "../store/task-table.ts";
import { markTimedOut } from "./deadline-mark.ts";
import { markKillAsked } from "./kill-asked.ts";
import { type KillHow, killLadder } from "./kill-ladder.ts";
import { ownsGroup } from "./owns-group.ts";

export interface KillResult {
  record: TaskRecord;
  how: KillHow | "terminal";
}

/** How a kill is asked for. */
export interface KillRequest {
  graceMs?: number;
  reason?: string;
  state?: "killed" | "timed_out";
  /** The task's own cancel (an MCP client's `tasks/cancel`) asks for this kill: the `killing` record says so (`cancelledAt`). */
  cancel?: boolean;
}

type Finish = Extract<ReplayDecision, { kind: "finish" }>;

export interface TaskKillsOptions {
  table: TaskTable;
  store: TaskStore;
  placements: Record<PlacementName, Placement>;
  graceMs: number;
  /** The deadline of a task without a timeout, for the reason a deadline kill gives. */
  ceilingSeconds: number;
  log(line: string): void;
  /** Decides the task from fresh evidence (null: terminal already). */
  decideNow(id: string): Promise<{ record: TaskRecord; decision: ReplayDecision } | null>;
  /** Ends the task as `end` says (see TaskEnder.endOne). */
  end(record: TaskRecord, end: Finish): Promise<TaskRecord>;
  /** Resolves once no check of the task is under way. */
  idle(id: string): Promise<void>;
  /** The ladder looked at the task's group and saw it alive or gone at `at` (epoch ms), for dating its end. */
  sighted?(id: string, look: { alive: boolean; at: number }): void;
}

/**
 * Carries out kills: one ladder per task (a second kill joins the first),
 * the `killing` record written before the first signal, a pid that is
 * someone else's now never signalled, and the end decided as soon as the
 * ladder is done.
 */
export class TaskKills {
  private readonly killing = new Map<string, Promise<KillResult>>();

  constructor(private readonly o: TaskKillsOptions) {}

  /** Kills a live task (the caller has checked it is not terminal); two kills at once share one ladder. */
  kill(record: TaskRecord, request: KillRequest = {}): Promise<KillResult> {
    const running = this.killing.get(record.id);
    if (running) return running;
    const killing = this.ladder(record, request).finally(() => this.killing.delete(record.id));
    this.killing.set(record.id, killing);
    return killing;
  }

  /** The task's deadline came: it is killed as `timed_out`, unless it ended or a kill is under way. */
  atDeadline(id: string): void {
    const current = this.o.table.get(id);
    if (!current || this.o.table.ended(id) || current.state === "killing") return;
    const limit = current.deadlineIsTimeout ? `its timeout of ${current.timeoutSeconds} s` : `the ceiling of ${this.o.ceilingSeconds} s`;
    void this.kill(current, { reason: `timed out: it ran past ${limit}`, state: "timed_out" }).catch((e) =>
      this.o.log(`kill of ${id} at its deadline failed: ${(e as Error).message}`));
  }

  /** Resolves once every kill under way is done: a kill asked for is carried out, never dropped. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.killing.values()]);
  }

  private async ladder(record: TaskRecord, request: KillRequest): Promise<KillResult> {
    const { table, store } = this.o;
    const placement = this.o.placements[record.placement];
    if (record.state !== "killing") {
      // An exit code already written wins over the kill: the task ended on its own first.
      if ((await readExitMarker(store.paths(record.id).exit)).kind === "code") {
        return { record: await this.settle(record.id), how: "already-gone" };
      }
      if (pidEvidence(record, placement) === "reused") {
        // Never signal a pid that is someone else's now; only the task's own cgroup may still be ended.
        const done = await this.o.end(record, {
          kind: "finish",
          state: "lost",
          exitCode: null,
          reason: `pid reused: pid ${record.pid} belongs to another process now, which was not signalled; the task ended without an exit code`,
          endRemnants: false,
          finishedAt: new Date().toISOString(),
          finishedAtSource: "seen-gone",
          endedAfter: null,
        });
        await placement.killAll(record).catch(() => {});
        return { record: done, how: "pid-reused" };
      }
      const now = new Date().toISOString();
      record = {
        ...record,
        state: "killing",
        killStartedAt: now,
        killReason: request.reason ?? (request.cancel ? "cancelled by request" : "killed by request"),
        killState: request.state ?? "killed",
        // Who asked is kept with the kill: a later server tells the task's own cancel from any other kill by it.
        ...(request.cancel ? { cancelledAt: now } : {}),
      };
      // The deadline's evidence, as the task's watchdog leaves it, before the record says `killing`: a timed-out
      // task's end is dated by its marker whichever of the two ends it.
      if (request.state === "timed_out") markTimedOut(store.paths(record.id));
      // Written before the first signal, and only after the marker was seen empty: any exit code that appears from now on is the kill's.
      await store.write(record);
      table.commit(record);
    }
    // After the record, before any signal (a resumed kill's too): the TERM is then known to the task as this kill's.
    markKillAsked(store.paths(record.id));
    let how: KillHow;
    if (record.pid === null || record.pgid === null || record.startTime === null) {
      await placement.killAll(record);
      how = "already-gone";
    } else {
      const target = record;
      how = await killLadder(
        { pid: target.pid!, pgid: target.pgid!, startTime: target.startTime! },
        {
          graceMs: request.graceMs ?? this.o.graceMs,
          killAll: () => placement.killAll(target),
          ownsGroup: (members) => ownsGroup(target, placement, members),
          looked: (alive, at) => this.o.sighted?.(target.id, { alive, at }),
        },
      );
    }
    return { record: await this.settle(record.id), how };
  }

  /** After a ladder the task is gone: decide its end now rather than on the next wake. */
  private async settle(id: string): Promise<TaskRecord> {
    await this.o.idle(id);
    const decided = await this.o.decideNow(id);
    if (decided?.decision.kind === "finish") return this.o.end(decided.record, decided.decision);
    // Terminal already, or still alive after SIGKILL and the cgroup kill: the record says which, truthfully.
    return this.o.table.get(id)!;
  }
}
