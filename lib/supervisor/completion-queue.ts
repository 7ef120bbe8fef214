import type { TaskRecord } from "../store/record/record.ts";
import { CompletionFeed, type CompletionSubscription } from "./completion-feed.ts";

/**
 * Terminal tasks waiting for the owner. Each id is queued at most once per
 * supervisor life, however often replay or observation finds it; after a
 * restart, replay queues the unacknowledged ones again. The queue hands each
 * item to one iterator (the owner's); `subscribe()` gives each subscriber
 * all of them instead (the wire's subscribers, lib/rpc).
 */
export class CompletionQueue {
  private readonly queued = new Set<string>();
  private readonly items: TaskRecord[] = [];
  private readonly waiters: Array<(r: IteratorResult<TaskRecord>) => void> = [];
  private closed = false;
  private readonly feed = new CompletionFeed();

  /** False when this id was queued before. */
  push(record: TaskRecord): boolean {
    if (this.queued.has(record.id) || this.closed) return false;
    this.queued.add(record.id);
    this.feed.offer(record);
    const waiter = this.waiters.shift();
    if (waiter) waiter({ value: record, done: false });
    else this.items.push(record);
    return true;
  }

  /** Drops an acknowledged id that is still waiting, so it is not delivered after all. */
  forget(id: string): void {
    const i = this.items.findIndex((r) => r.id === id);
    if (i >= 0) this.items.splice(i, 1);
    this.feed.drop(id);
  }

  /** Every unacknowledged completion of this life, then each new one, for this subscriber alone. */
  subscribe(): CompletionSubscription {
    return this.feed.subscribe();
  }

  close(): void {
    this.closed = true;
    this.feed.close();
    for (const w of this.waiters.splice(0)) w({ value: undefined, done: true });
  }

  /** Records not yet taken; for inspection. */
  pending(): readonly TaskRecord[] {
    return this.items;
  }

  [Symbol.asyncIterator](): AsyncIterator<TaskRecord> {
    return {
      next: () => {
        const item = this.items.shift();
        if (item) return Promise.resolve({ value: item, done: false });
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => this.waiters.push(resolve));
      },
      return: () => Promise.resolve({ value: undefined, done: true }),
    };
  }
}
