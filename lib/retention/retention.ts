import { join } from "node:path";
import { OutliveError } from "../errors.ts";
import { isTerminal, type TaskRecord } from "../store/record.ts";
import { checkTaskId } from "../store/task-id.ts";
import type { TaskStore, UnreadableTask } from "../store/task-store.ts";
import { choosePrune, type PruneRule } from "./choose-prune.ts";
import { raiseGenerationFloor } from "./generation-floor.ts";
import { removeUnneededIncarnations } from "./incarnation-gc.ts";
import { moveAside, purgeRemoved, unlinkIfThere } from "./remove-files.ts";

/** What removal needs of the supervisor: its records, and the means to forget one. */
export interface RetentionHost {
  store: TaskStore;
  records: Map<string, TaskRecord>;
  /** Drops a removed task from the completion queue and anything else that holds it. */
  forget(id: string): void;
  /** Incarnations that must stay whatever the records say (this one). */
  liveIncarnations(): string[];
  unreadable(): readonly UnreadableTask[];
}

export interface PruneResult {
  /** Task ids removed, oldest first. */
  removed: string[];
  /** Incarnation files no record needed any more, removed. */
  incarnationsRemoved: number;
}

/**
 * Removes finished tasks by id, and quarantined entries by their name in
 * `quarantine/`. Every name is checked before anything is removed: one live
 * or unknown name and nothing is.
 */
export async function removeByName(host: RetentionHost, names: readonly string[]): Promise<string[]> {
  const quarantined = new Set(await host.store.quarantined());
  const tasks: TaskRecord[] = [];
  const entries: string[] = [];
  for (const name of names) {
    if (quarantined.has(name)) {
      entries.push(name);
      continue;
    }
    const record = host.records.get(checkTaskId(name));
    if (!record) throw new OutliveError("E_NO_TASK", `No task or quarantined record ${JSON.stringify(name)} in ${host.store.root}`);
    if (!isTerminal(record.state)) {
      throw new OutliveError("E_TASK_LIVE", `Task ${name} is ${record.state}; kill it first (outlive kill ${name}), then remove it. Nothing was removed`);
    }
    tasks.push(record);
  }
  await removeTasks(host, tasks);
  for (const name of entries) {
    await moveAside(host.store.root, join(host.store.root, "quarantine", name), `quarantine-${name}`);
    await unlinkIfThere(join(host.store.root, "quarantine", `${name}.reason.txt`));
  }
  await tidy(host);
  return [...tasks.map((t) => t.id), ...entries];
}

/** Removes the finished, acknowledged tasks `rule` selects, oldest first. */
export async function prune(host: RetentionHost, rule: PruneRule, now = new Date()): Promise<PruneResult> {
  const ids = choosePrune([...host.records.values()], rule, now);
  await removeTasks(host, ids.map((id) => host.records.get(id)!));
  return { removed: ids, incarnationsRemoved: await tidy(host) };
}

async function removeTasks(host: RetentionHost, tasks: readonly TaskRecord[]): Promise<void> {
  if (tasks.length === 0) return;
  // A record write still under way would land in a directory that is moving away.
  await host.store.flush();
  let highest = 0;
  for (const t of tasks) highest = Math.max(highest, t.generation ?? 0);
  if (highest > 0) {
    let stored = 0;
    for (const r of host.records.values()) stored = Math.max(stored, r.generation ?? 0);
    await raiseGenerationFloor(host.store.root, stored);
  }
  for (const task of tasks) {
    await moveAside(host.store.root, host.store.paths(task.id).dir, task.id);
    host.records.delete(task.id);
    host.forget(task.id);
  }
}

/** At open: prunes by the `retention` rule (none when false), then tidies. */
export async function retainAtOpen(host: RetentionHost, rule: PruneRule | false): Promise<PruneResult> {
  if (rule) return prune(host, rule);
  return { removed: [], incarnationsRemoved: await tidy(host) };
}

/** Deletes what was moved aside (also by a removal a crash cut short) and the incarnation files no record needs. */
async function tidy(host: RetentionHost): Promise<number> {
  await purgeRemoved(host.store.root);
  return removeUnneededIncarnations(host.store.root, host.records.values(), {
    ids: host.liveIncarnations(),
    unparsedTaskIds: host.unreadable().filter((u) => u.quarantinedTo === null).map((u) => u.id),
  });
}
