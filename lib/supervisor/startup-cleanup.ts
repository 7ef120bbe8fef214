import type { Placement } from "../placement/placement.ts";
import { isTerminal, type TaskRecord } from "../store/record.ts";

/**
 * Visits every task unit or cgroup of this prefix that exists now, in each
 * placement that works here (the chosen one is known to), by task id.
 */
export async function forEachPlacedTask(
  placements: Iterable<Placement>,
  chosen: Placement,
  visit: (placement: Placement, id: string) => Promise<void>,
): Promise<void> {
  for (const placement of new Set(placements)) {
    if (placement !== chosen && !(await placement.probe()).ok) continue;
    const ids = await placement.list().catch(() => [] as string[]);
    for (const id of ids) await visit(placement, id);
  }
}

/**
 * At startup: a unit or cgroup whose record here is terminal is stopped
 * (whatever it left running); one with no record here is never touched,
 * since another instance may own it.
 */
export async function cleanUpAtStartup(
  placements: Iterable<Placement>,
  chosen: Placement,
  records: { get(id: string): TaskRecord | undefined },
): Promise<{ cleanedUp: string[]; foreign: string[] }> {
  const cleanedUp: string[] = [];
  const foreign: string[] = [];
  await forEachPlacedTask(placements, chosen, async (placement, id) => {
    const record = records.get(id);
    if (!record) foreign.push(id);
    else if (isTerminal(record.state)) {
      await placement.stop(id).catch(() => {});
      cleanedUp.push(id);
    }
  });
  return { cleanedUp, foreign };
}
