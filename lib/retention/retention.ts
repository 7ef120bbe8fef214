import { OutliveError } from "../errors.ts";
import { quarantineNotePath, quarantinePath } from "../store/layout.ts";
import { isTerminal, type TaskRecord } from "../store/record/record.ts";
import { checkTaskId } from "../store/record/task-id.ts";
import type { TaskStore, UnreadableTask } from "../store/task-store.ts";
import type { TaskTable } from "../store/task-table.ts";
import { choosePrune, heldForAck, type PruneRule } from "./choose-prune.ts";
import { raiseGenerationFloor } from "./generation-floor.ts";
import { removeUnneededIncarnations } from "./incarnation-gc.ts";
import type { Purger } from "./purger.ts";
import { moveAside, unlinkIfThere } from "./remove-files.ts";

/** What removal needs of the supervisor: its records, and the means to forget one. */
export interface RetentionHost {
  store: TaskStore;
  /** The records held; a removed task is forgotten there. */
  records: TaskTable;
  /** Drops a removed task from the completion queue and anything else that holds it. */
  forget(id: string): void;
  /** Incarnations that must stay whatever the records say (this one). */
  liveIncarnations(): string[];
  unreadable(): readonly UnreadableTask[];
  purger: Purger;
}

export interface PruneResult {
  /** Task ids removed, oldest first. */
  removed: string[];
  /** Incarnation files no record needed any more, removed. */
  incarnationsRemoved: number;
  /** Finished tasks left because their completion waits for an ack (`unacknowledged: true` removes them too). */
  keptUnacknowledged: number;
}

/**
 * A supervisor that lives long prunes by its retention rule as it goes, once
 * this many tasks are over the rule, so neither its storage nor the next
 * open has to take more than a batch at a time.
 */
export const RETENTION_BATCH = 100;

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
  moveAside(host.store.root, entries.map((name) => ({ path: quarantinePath(host.store.root, name), name: `quarantine-${name}` })), () => {});
  for (const name of entries) await unlinkIfThere(quarantineNotePath(quarantinePath(host.store.root, name), false));
  await removeUnneeded(host);
  await host.purger.now();
  return [...tasks.map((t) => t.id), ...entries];
}

/**
 * Removes the finished tasks `rule` selects (acknowledged, or started by a
 * CLI; see choosePrune), oldest first.
 * `purge: "now"` deletes their files before resolving (a prune asked for);
 * `"soon"` leaves that to the background (the retention rule's own prunes).
 */
export async function prune(host: RetentionHost, rule: PruneRule, purge: "now" | "soon", now = new Date()): Promise<PruneResult> {
  const ids = choosePrune([...host.records.values()], rule, now);
  await removeTasks(host, ids.map((id) => host.records.get(id)!));
  const incarnationsRemoved = await removeUnneeded(host);
  if (purge === "now") await host.purger.now();
  else host.purger.soon();
  return { removed: ids, incarnationsRemoved, keptUnacknowledged: heldForAck(host.records.values(), rule) };
}

/** At open: prunes by the `retention` rule (none when false); what earlier removals left is deleted in the background. */
export async function retainAtOpen(host: RetentionHost, rule: PruneRule | false): Promise<PruneResult> {
  if (rule) return prune(host, rule, "soon");
  host.purger.soon();
  return { removed: [], incarnationsRemoved: await removeUnneeded(host), keptUnacknowledged: 0 };
}

/** While a supervisor lives: prunes by its rule once a batch is over it. */
export async function pruneWhenOver(host: RetentionHost, rule: PruneRule): Promise<void> {
  if (choosePrune([...host.records.values()], rule, new Date()).length >= RETENTION_BATCH) await prune(host, rule, "soon");
}

async function removeTasks(host: RetentionHost, tasks: readonly TaskRecord[]): Promise<void> {
  if (tasks.length === 0) return;
  // A record write still under way would land in a directory that is moving away.
  await host.store.flush();
  if (tasks.some((t) => t.generation !== null)) {
    let stored = 0;
    for (const r of host.records.values()) stored = Math.max(stored, r.generation ?? 0);
    await raiseGenerationFloor(host.store.root, stored);
  }
  moveAside(host.store.root, tasks.map((t) => ({ path: host.store.paths(t.id).dir, name: t.id })), (id) => {
    host.records.forget(id);
    host.forget(id);
  });
}

function removeUnneeded(host: RetentionHost): Promise<number> {
  return removeUnneededIncarnations(host.store.root, host.records.values(), {
    ids: host.liveIncarnations(),
    unparsedTaskIds: host.unreadable().filter((u) => u.quarantinedTo === null).map((u) => u.id),
  });
}
