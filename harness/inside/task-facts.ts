import { statSync } from "node:fs";
import { TaskStore } from "../../lib/internal.ts";
import type { TaskFacts } from "../shared/report.ts";

function size(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * How many times each task's completion was delivered, from the deliveries
 * themselves (one entry per delivery, a redelivery after a restart counted
 * again). Pure.
 *
 * @example
 * ```ts
 * import { deliveryCounts } from "./task-facts.ts";
 * console.log(deliveryCounts([{ id: "a" }, { id: "b" }, { id: "a" }])); // Map { "a" => 2, "b" => 1 }
 * ```
 */
export function deliveryCounts(deliveries: Iterable<{ id: string }>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const d of deliveries) counts.set(d.id, (counts.get(d.id) ?? 0) + 1);
  return counts;
}

/**
 * Every task of the given storages as its record says now (read from disk,
 * no supervisor opened, so nothing is replayed or changed by looking), with
 * its output sizes and how often its completion reached the daemon: every
 * delivery `deliveriesOf` gives for that storage, whichever module made it
 * (a scenario daemon's, or a soak's own simulator's).
 */
export async function collectTaskFacts(storages: Iterable<string>, deliveriesOf: (storage: string) => Array<{ id: string }>): Promise<TaskFacts[]> {
  const facts: TaskFacts[] = [];
  for (const storage of storages) {
    const delivered = deliveryCounts(deliveriesOf(storage));
    const store = await TaskStore.open(storage, { readOnly: true });
    const { records } = await store.loadAll({ quarantine: false });
    for (const r of records) {
      const paths = store.paths(r.id);
      facts.push({
        id: r.id,
        storage,
        placement: r.placement,
        fate: r.state,
        exitCode: r.exitCode,
        reason: r.reason,
        unit: r.location.unit ?? r.location.cgroup ?? null,
        createdAt: r.createdAt,
        startedAt: r.startedAt,
        finishedAt: r.finishedAt,
        stdoutBytes: size(paths.stdout),
        stderrBytes: size(paths.stderr),
        completionsDelivered: delivered.get(r.id) ?? 0,
      });
    }
  }
  return facts.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}
