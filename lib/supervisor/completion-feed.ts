import type { TaskRecord } from "../store/record/record.ts";

/** One subscriber's view of the completions: its own buffer, so no subscriber takes another's. */
export interface CompletionSubscription extends AsyncIterable<TaskRecord> {
  /** Ends the iteration; what was buffered is dropped. */
  close(): void;
}

/**
 * Every unacknowledged completion, for every subscriber once per
 * subscription: a new subscriber first gets those queued before it came
 * (tasks that ended while no supervisor ran among them), then each new one.
 * An acknowledgement removes the task from every buffer, so a completion
 * acknowledged by one subscriber is not sent to the others afterwards.
 */
export class CompletionFeed {
  private readonly unacknowledged = new Map<string, TaskRecord>();
  private readonly subscribers = new Set<Subscriber>();
  private closed = false;

  offer(record: TaskRecord): void {
    if (this.closed || this.unacknowledged.has(record.id)) return;
    this.unacknowledged.set(record.id, record);
    for (const s of this.subscribers) s.offer(record);
  }

  drop(id: string): void {
    this.unacknowledged.delete(id);
    for (const s of this.subscribers) s.drop(id);
  }

  subscribe(): CompletionSubscription {
    const subscriber = new Subscriber([...this.unacknowledged.values()], () => this.subscribers.delete(subscriber));
    if (this.closed) subscriber.close();
    else this.subscribers.add(subscriber);
    return subscriber;
  }

  close(): void {
    this.closed = true;
    for (const s of [...this.subscribers]) s.close();
  }
}

class Subscriber implements CompletionSubscription {
  private waiter: ((r: IteratorResult<TaskRecord>) => void) | null = null;
  private ended = false;

  constructor(private readonly buffer: TaskRecord[], private readonly onClose: () => void) {}

  offer(record: TaskRecord): void {
    if (this.ended) return;
    const waiter = this.waiter;
    this.waiter = null;
    if (waiter) waiter({ value: record, done: false });
    else this.buffer.push(record);
  }

  drop(id: string): void {
    const i = this.buffer.findIndex((r) => r.id === id);
    if (i >= 0) this.buffer.splice(i, 1);
  }

  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.buffer.length = 0;
    this.onClose();
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<TaskRecord> {
    return {
      next: () => {
        const item = this.buffer.shift();
        if (item) return Promise.resolve({ value: item, done: false });
        if (this.ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.waiter = resolve));
      },
      return: () => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
