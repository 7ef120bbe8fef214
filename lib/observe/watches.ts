import type { ChildProcess } from "node:child_process";
import type { Placement } from "../placement/placement.ts";
import type { PlacementName, TaskRecord } from "../store/record/record.ts";
import { TaskWatch } from "./task-watch.ts";

export interface WatchesOptions {
  placements: Record<PlacementName, Placement>;
  /** The task's `io/` directory, where its exit marker appears. */
  ioDir(id: string): string;
  livenessIntervalMs: number;
  /** Something may have changed for task `id`: decide it from fresh evidence. Never runs twice at once for a task. */
  check(id: string): Promise<void>;
  /** Task `id`'s deadline has come. */
  deadline(id: string): void;
  /** Task `id`'s cgroup was seen empty at `at` (epoch ms). */
  emptied?(id: string, at: number): void;
}

/**
 * The running tasks this process watches, one `TaskWatch` each, from the
 * moment they run (or are adopted) until their end is announced.
 */
export class Watches {
  private readonly watched = new Map<string, TaskWatch>();
  private closed = false;

  constructor(private readonly o: WatchesOptions) {}

  /** Watches a running task until it ends; every wake decides from fresh evidence. See TaskWatch for `child` and `firstLook`. */
  watch(record: TaskRecord, child?: ChildProcess, firstLook?: () => boolean): void {
    if (this.watched.has(record.id) || this.closed) return;
    const id = record.id;
    this.watched.set(id, new TaskWatch({
      record,
      child,
      ioDir: this.o.ioDir(id),
      placement: this.o.placements[record.placement],
      livenessIntervalMs: this.o.livenessIntervalMs,
      firstLook,
      check: () => this.o.check(id),
      onDeadline: () => this.o.deadline(id),
      onEmptied: (at) => this.o.emptied?.(id, at),
    }));
  }

  /** Resolves once the task's end is announced; null when it is not watched. */
  ending(id: string): Promise<TaskRecord> | null {
    const w = this.watched.get(id);
    return w ? new Promise((resolve) => w.waiters.push(resolve)) : null;
  }

  /** Resolves once this process reaped the task's wrapper (see TaskWatch.reaped). */
  reaped(id: string, timeoutMs: number): Promise<void> {
    return this.watched.get(id)?.reaped(timeoutMs) ?? Promise.resolve();
  }

  /** Resolves once no check of the task is under way. */
  async idle(id: string): Promise<void> {
    await this.watched.get(id)?.idle();
  }

  /** The task's terminal record is on disk: stop watching, answer its waiters. */
  ended(done: TaskRecord): void {
    const w = this.watched.get(done.id);
    if (!w) return;
    w.stop();
    this.watched.delete(done.id);
    for (const resolve of w.waiters) resolve(done);
  }

  /** Stops every watch (the tasks run on); resolves once the checks under way have finished. */
  async close(): Promise<void> {
    this.closed = true;
    const watches = [...this.watched.values()];
    for (const w of watches) w.stop();
    this.watched.clear();
    await Promise.allSettled(watches.map((w) => w.idle()));
  }
}
