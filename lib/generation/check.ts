/**
 * What the generation check needs to know about one key: which generation
 * owns it now (null once the owner has settled) and which generations under
 * it have not settled yet (the owner and any superseded predecessors still
 * draining).
 *
 * @example
 * ```ts
 * import type { KeyState } from "./check.ts";
 * // The owner (5) exited; generation 3, superseded by 5, is still draining.
 * const state: KeyState = { current: null, live: new Set([3]) };
 * console.log(state.live.size); // 1
 * ```
 */
export interface KeyState {
  readonly current: number | null;
  readonly live: ReadonlySet<number> | ReadonlyMap<number, unknown>;
}

/**
 * True only when `generation` owns `key` right now. A missing record means
 * stale, never current: once every generation under a key has settled the
 * record is gone, and a late event from any of them must not look like the
 * owner's. Comparing against the owner (rather than "the latest spawned")
 * also makes a settled owner's own late events stale.
 *
 * Pure: feed it plain data.
 *
 * @example
 * ```ts
 * import { isCurrentGeneration } from "./check.ts";
 * const table = new Map([["tab-1", { current: 4, live: new Set([3, 4]) }]]);
 * console.log(isCurrentGeneration(table, "tab-1", 4)); // true
 * console.log(isCurrentGeneration(table, "tab-1", 3)); // false: superseded, still draining
 * console.log(isCurrentGeneration(table, "tab-2", 1)); // false: no record means stale
 * ```
 */
export function isCurrentGeneration(
  table: ReadonlyMap<string, KeyState>,
  key: string,
  generation: number,
): boolean {
  const state = table.get(key);
  return state !== undefined && state.current === generation;
}
