/**
 * A minimal typed listener registry. Not node:events, on purpose: an
 * EventEmitter throws when an `error` event has no listener, and here
 * `error` reports a fault that must never crash the caller. It also keeps
 * the per-event cost a plain loop, which the benchmark measures.
 */
const NONE: ReadonlyArray<never> = Object.freeze([]);

export class ListenerSet<Events extends object> {
  #byName: { [K in keyof Events]?: Array<(event: Events[K]) => void> } = {};

  /** Adds a listener; returns the function that removes it again. */
  on<K extends keyof Events>(name: K, listener: (event: Events[K]) => void): () => void {
    // Copy-on-write, so a listener added or removed during an emit does not
    // disturb the loop that is running.
    this.#byName[name] = [...(this.#byName[name] ?? []), listener];
    return () => {
      this.#byName[name] = (this.#byName[name] ?? []).filter((l) => l !== listener);
    };
  }

  /**
   * The listeners of `name` as of now. The array is never mutated later
   * (copy-on-write), so a caller may loop over it and re-check a condition
   * between listeners, which `emit` cannot do.
   */
  snapshot<K extends keyof Events>(name: K): ReadonlyArray<(event: Events[K]) => void> {
    return this.#byName[name] ?? NONE;
  }

  /** Calls every listener of `name` in the order they were added. */
  emit<K extends keyof Events>(name: K, event: Events[K]): void {
    const listeners = this.#byName[name];
    if (listeners === undefined) return;
    for (let i = 0; i < listeners.length; i++) listeners[i](event);
  }
}
