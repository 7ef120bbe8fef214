import type { Placement } from "../placement/placement.ts";
import { isTerminal, type TaskRecord } from "../store/record/record.ts";

/** The task units or cgroups of this prefix that existed when listed, by placement. */
export type PlacedTasks = Array<{ placement: Placement; ids: string[] }>;

/**
 * Lists every task unit or cgroup of this prefix that exists now, in each
 * placement that works here (the chosen one is known to), by task id.
 */
export async function listPlacedTasks(placements: Iterable<Placement>, chosen: Placement): Promise<PlacedTasks> {
  const found: PlacedTasks = [];
  for (const placement of new Set(placements)) {
    if (placement !== chosen && !(await placement.probe()).ok) continue;
    found.push({ placement, ids: await placement.list().catch(() => [] as string[]) });
  }
  return found;
}

/** Visits every task unit or cgroup of this prefix that exists now (see listPlacedTasks). */
export async function forEachPlacedTask(
  placements: Iterable<Placement>,
  chosen: Placement,
  visit: (placement: Placement, id: string) => Promise<void>,
): Promise<void> {
  for (const { placement, ids } of await listPlacedTasks(placements, chosen)) {
    for (const id of ids) await visit(placement, id);
  }
}

/**
 * At startup: a unit or cgroup whose record here is terminal is stopped
 * (whatever it left running); one with no record here is never touched,
 * since another instance may own it. `placed` may be listed before the
 * records are decided (replay runs meanwhile): only the records, read
 * after, decide what is stopped.
 */
export async function cleanUpAtStartup(
  placed: PlacedTasks,
  records: { get(id: string): TaskRecord | undefined },
): Promise<{ cleanedUp: string[]; foreign: string[] }> {
  const cleanedUp: string[] = [];
  const foreign: string[] = [];
  for (const { placement, ids } of placed) {
    for (const id of ids) {
      const record = records.get(id);
      if (!record) foreign.push(id);
      else if (isTerminal(record.state)) {
        await placement.stop(id).catch(() => {});
        cleanedUp.push(id);
      }
    }
  }
  return { cleanedUp, foreign };
}
