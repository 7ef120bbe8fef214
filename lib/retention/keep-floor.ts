import type { TaskRecord } from "../store/record/record.ts";

/**
 * The moment (epoch ms) before which retention may not remove a finished
 * task: its end plus its `keepAfterEndMs` (an MCP task's TTL), or null when
 * it has no such floor. A record without `finishedAt` (none is written so
 * now) counts from its creation. Pure.
 *
 * @example
 * ```ts
 * import { keptUntil } from "./keep-floor.ts";
 * const r = { finishedAt: "2026-12-01T00:00:00.000Z", createdAt: "2026-11-30T00:00:00.000Z", keepAfterEndMs: 60_000 } as never;
 * console.log(new Date(keptUntil(r)!).toISOString()); // "2026-12-01T00:01:00.000Z"
 * ```
 */
export function keptUntil(r: Pick<TaskRecord, "finishedAt" | "createdAt" | "keepAfterEndMs">): number | null {
  if (r.keepAfterEndMs === undefined) return null;
  return Date.parse(r.finishedAt ?? r.createdAt) + r.keepAfterEndMs;
}

/**
 * Whether `r` must stay at `now`: its floor has not passed. Retention's every
 * way of removing by rule (the rule at open, `prune`, with or without
 * `unacknowledged`) asks this; an explicit remove of the task by name does not.
 *
 * @example
 * ```ts
 * import { heldByFloor } from "./keep-floor.ts";
 * const r = { finishedAt: "2026-12-01T00:00:00.000Z", createdAt: "2026-12-01T00:00:00.000Z", keepAfterEndMs: 60_000 } as never;
 * console.log(heldByFloor(r, new Date("2026-12-01T00:00:59Z")), heldByFloor(r, new Date("2026-12-01T00:01:00Z"))); // true false
 * ```
 */
export function heldByFloor(r: Pick<TaskRecord, "finishedAt" | "createdAt" | "keepAfterEndMs">, now: Date): boolean {
  const until = keptUntil(r);
  return until !== null && now.getTime() < until;
}
