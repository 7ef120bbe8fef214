import { OutliveError } from "../errors.ts";
import { summarizeOutput } from "../observe/output-tail.ts";
import type { ListeningPort } from "../ports/proc-net.ts";
import type { TaskPaths } from "../store/layout.ts";
import { isTerminal, type TaskRecord } from "../store/record/record.ts";
import { noReadiness, type ReadyAtSource } from "./ready-spec.ts";
import { ReadyWatch } from "./ready-watch.ts";

export interface ReadyWatchesOptions {
  paths(id: string): TaskPaths;
  /** The task as held now. */
  get(id: string): TaskRecord | undefined;
  ports(record: TaskRecord): ListeningPort[];
  /** Records `readyAt` (and its source); resolves with the record as held after, null when it could not be. */
  mark(id: string, at: Date, source: ReadyAtSource): Promise<TaskRecord | null>;
  /** Bytes of each stream quoted when a wait for readiness fails. */
  tailBytes: number;
}

interface Waiter {
  resolve(record: TaskRecord): void;
  reject(error: Error): void;
}

/**
 * The live tasks whose readiness is still to be seen, one ReadyWatch each,
 * from the moment they run (or are adopted) until they are ready or end;
 * and those who wait for it (`run`'s `waitReady`, the wire's `wait` until
 * ready), and who hear of it (the wire's `ready` notification).
 */
export class ReadyWatches {
  private readonly watches = new Map<string, ReadyWatch>();
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly listeners = new Set<(record: TaskRecord) => void>();
  private readonly marking = new Set<Promise<unknown>>();
  /** The tasks whose readiness is being recorded: held already, its write not yet landed. */
  private readonly recording = new Map<string, Promise<TaskRecord | null>>();
  private closed = false;

  constructor(private readonly o: ReadyWatchesOptions) {}

  /** Watches a running task with a readiness condition not yet seen; `afterReplay` for one adopted at open. */
  watch(record: TaskRecord, afterReplay: boolean): void {
    if (this.closed || !record.ready || record.readyAt || isTerminal(record.state) || this.watches.has(record.id)) return;
    this.watches.set(record.id, new ReadyWatch({
      record,
      paths: this.o.paths(record.id),
      afterReplay,
      ports: (r) => this.o.ports(r),
      ready: (at, source) => this.track(this.ready(record.id, at, source)),
    }));
  }

  /** The task ended: no more looks, and whoever waited for its readiness is told it never came. */
  ended(record: TaskRecord): void {
    this.watches.get(record.id)?.stop();
    this.watches.delete(record.id);
    if (record.readyAt) return;
    void this.fail(record.id, (r, tail) => `${endedFirst(r)}${tail}`);
  }

  /**
   * Resolves with the record once the task is ready; rejects with
   * E_NOT_READY (the error's `task` is the record, its message the state,
   * reason and last output) when it ends first or its ready timeout passes
   * (it runs on), E_BAD_OPTION when it names no condition.
   */
  waitReady(id: string): Promise<TaskRecord> {
    const record = this.o.get(id);
    if (!record) return Promise.reject(new OutliveError("E_NO_TASK", `No task ${JSON.stringify(id)}`));
    if (!record.ready) return Promise.reject(noReadiness(id));
    // Held but not yet on disk: the answer waits for its write, so a reader of the record after it sees it too.
    const recording = this.recording.get(id);
    if (recording) return recording.then(() => this.waitReady(id));
    if (record.readyAt) return Promise.resolve(record);
    if (isTerminal(record.state)) return this.notReady(record, endedFirst(record), record.outputTail?.trim() ? `; last output:\n${record.outputTail.trimEnd()}` : "");
    if (!this.watches.has(id)) return Promise.reject(new OutliveError("E_NO_TASK", `Task ${id}'s readiness is not being watched by this supervisor`));
    const deadline = Date.parse(record.startedAt ?? record.createdAt) + record.ready.timeoutSeconds * 1000;
    return new Promise<TaskRecord>((resolve, reject) => {
      const timer = setTimeout(() => {
        void this.fail(id, (r, tail) => `Task ${id} is not ready after ${r.ready!.timeoutSeconds} s (its ready timeout); it runs on, ${r.state}${tail}`, waiter);
      }, Math.max(0, deadline - Date.now()));
      const waiter: Waiter = {
        resolve: (r) => (clearTimeout(timer), resolve(r)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      };
      const set = this.waiters.get(id) ?? new Set();
      set.add(waiter);
      this.waiters.set(id, set);
    });
  }

  /** Hears every task that becomes ready while subscribed; returns the unsubscribe. */
  subscribe(listener: (record: TaskRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops every watch; waiters are told the supervisor closed. Resolves once no look or write is under way. */
  async close(): Promise<void> {
    this.closed = true;
    const watches = [...this.watches.values()];
    for (const w of watches) w.stop();
    this.watches.clear();
    await Promise.allSettled([...watches.map((w) => w.idle()), ...this.marking]);
    for (const [id, set] of this.waiters) {
      for (const w of set) w.reject(new OutliveError("E_CLOSED", `The supervisor closed while task ${id}'s readiness was awaited; ask again`));
    }
    this.waiters.clear();
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.marking.add(work);
    void work.catch(() => {}).finally(() => this.marking.delete(work));
    return work;
  }

  private async ready(id: string, at: number, source: ReadyAtSource): Promise<void> {
    this.watches.delete(id);
    const marked = this.o.mark(id, new Date(at), source).catch(() => null).finally(() => this.recording.delete(id));
    this.recording.set(id, marked);
    const record = await marked;
    if (!record?.readyAt) return;
    const set = this.waiters.get(id);
    this.waiters.delete(id);
    for (const w of set ?? []) w.resolve(record);
    for (const listener of this.listeners) {
      try {
        listener(record);
      } catch {
        // A listener's fault is its own.
      }
    }
  }

  /** Rejects the waiters of `id` (or only `only`) with E_NOT_READY, the message made from the record and its last output. */
  private async fail(id: string, words: (r: TaskRecord, tail: string) => string, only?: Waiter): Promise<void> {
    const set = this.waiters.get(id);
    if (!set || set.size === 0) return;
    const record = this.o.get(id);
    if (!record) return;
    const tail = await this.tailOf(record);
    const error = notReadyError(record, words(record, tail));
    for (const w of only ? [only] : [...set]) {
      set.delete(w);
      w.reject(error);
    }
    if (set.size === 0) this.waiters.delete(id);
  }

  private notReady(record: TaskRecord, message: string, tail: string): Promise<never> {
    return Promise.reject(notReadyError(record, `${message}${tail}`));
  }

  private async tailOf(record: TaskRecord): Promise<string> {
    const text = record.outputTail ?? (await summarizeOutput(this.o.paths(record.id), this.o.tailBytes).then((s) => s.tail, () => ""));
    return text.trim() === "" ? "" : `; last output:\n${text.trimEnd()}`;
  }
}

/** A task that ended before it was ready, in words: how, and the reason recorded. */
function endedFirst(r: TaskRecord): string {
  return `Task ${r.id} ${r.state === "exited" ? "exited" : `ended ${r.state}`} before it was ready (${r.reason ?? "no reason recorded"})`;
}

/** E_NOT_READY, carrying the task's record as `task`. */
export function notReadyError(record: TaskRecord, message: string): OutliveError & { task: TaskRecord } {
  return Object.assign(new OutliveError("E_NOT_READY", message), { task: record });
}
