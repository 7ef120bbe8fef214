import type { KeyState } from "./check.ts";
import type { KillSignal, ProcessHandle } from "./handle.ts";

/** The table's bookkeeping for one generation, from spawn until it settles. */
export class GenerationEntry {
  handle: ProcessHandle | null = null;
  pid: number | null = null;
  settled = false;
  /** The last signal sent (or asked for), reported on `exit`. */
  killSignal: KillSignal | null = null;
  /** A kill asked for before `start` returned a handle; delivered as soon as it does. */
  pendingKill: KillSignal | null = null;
  supersededBy: number | null = null;

  constructor(
    readonly key: string,
    readonly generation: number,
  ) {}
}

/**
 * Everything under one key. It lives until every generation under the key
 * has settled, so a draining predecessor always finds a record whose owner
 * is not itself; and if the record is gone, the check says stale anyway.
 */
export class KeyRecord implements KeyState {
  current: number | null = null;
  readonly live = new Map<number, GenerationEntry>();
}
