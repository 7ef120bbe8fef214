import { statSync } from "node:fs";
import { TaskStore } from "../../lib/mod.ts";
import type { TaskFacts } from "../shared/report.ts";

// deno-lint-ignore no-explicit-any
type Message = Record<string, any>;

function size(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * Every task of the given storages as its record says now (read from disk,
 * no supervisor opened, so nothing is replayed or changed by looking), with
 * its output sizes and how often its completion reached the daemon.
 */
export async function collectTaskFacts(storages: Iterable<string>, deliveriesOf: (storage: string) => Message[]): Promise<TaskFacts[]> {
  const facts: TaskFacts[] = [];
  for (const storage of storages) {
    const deliveries = deliveriesOf(storage);
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
        completionsDelivered: deliveries.filter((t) => t.id === r.id).length,
      });
    }
  }
  return facts.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}
