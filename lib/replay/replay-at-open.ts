import { readExitMarkerNow } from "../observe/exit-marker.ts";
import type { Ending } from "../end/end-tasks.ts";
import type { LocatedTask } from "../placement/placement.ts";
import { processStartedAt } from "../proc/start-time.ts";
import type { TaskRecord, TaskState } from "../store/record/record.ts";
import type { TaskStore, UnreadableTask } from "../store/task-store.ts";
import type { TaskTable } from "../store/task-table.ts";
import type { EvidenceSource } from "./evidence-source.ts";
import { replayAll } from "./replay-all.ts";
import { readCommandPid } from "../spawn/command-pid.ts";

/** What replay found when the supervisor opened. */
export interface ReplayReport {
  adopted: string[];
  finished: Array<{ id: string; state: TaskState; exitCode: number | null; reason: string }>;
  unchanged: string[];
  deferred: Array<{ id: string; reason: string }>;
  unreadable: UnreadableTask[];
  /** Units or cgroups whose record here was terminal, and were stopped. */
  cleanedUp: string[];
  /** Units or cgroups of this prefix with no record here: left alone (another instance may own them). */
  foreign: string[];
  /** Opened `readOnly`: the decisions replay made in memory and did not store (the records on disk are unchanged). */
  unstored: Array<{ id: string; state: TaskState; reason: string }>;
}

export interface ReplayAtOpenOptions {
  table: TaskTable;
  store: TaskStore;
  evidence: EvidenceSource;
  concurrency: number;
  perTaskMs: number;
  /** False for a read-only view: every decision is made and held in memory, and none is carried out. */
  apply: boolean;
  log(line: string): void;
  /** Ends tasks (see TaskEnder.end). */
  end(items: readonly Ending[], how: { apply: boolean }): Promise<TaskRecord[]>;
  /** Watches a task that runs on; `firstLook` is the cheap look that tells whether a full check must run at once. */
  watch(record: TaskRecord, firstLook?: () => boolean): void;
  /** Carries on a kill the last incarnation had begun. */
  resumeKill(record: TaskRecord): void;
}

/**
 * Replay at open: decides every record from its evidence, in parallel with
 * a bound per task, then carries the decisions out (adopts, ends, watches).
 * A read-only view goes through the same decisions, holds them in memory and
 * reports them as unstored: nothing is written, signalled or watched.
 */
export async function replayAtOpen(
  records: TaskRecord[],
  unreadable: UnreadableTask[],
  o: ReplayAtOpenOptions,
): Promise<ReplayReport> {
  const report: ReplayReport = { adopted: [], finished: [], unchanged: [], deferred: [], unreadable, cleanedUp: [], foreign: [], unstored: [] };
  const items = await o.evidence.indexed(records, () =>
    replayAll(records, (r) => o.evidence.gather(r), { concurrency: o.concurrency, perTaskMs: o.perTaskMs }));
  const unstored = new Map<string, { id: string; state: TaskState; reason: string }>();
  const toEnd: Ending[] = [];
  for (const { record, decision } of items) {
    if (decision.kind === "deferred") {
      report.deferred.push({ id: record.id, reason: decision.reason });
      if (!o.apply) continue;
      o.log(`replay of ${record.id} deferred: ${decision.reason}`);
      // Keep watching it: the next check decides it like any other observation.
      o.watch(record);
    } else if (decision.kind === "unchanged") {
      report.unchanged.push(record.id);
    } else if (decision.kind === "adopt") {
      report.adopted.push(record.id);
      const adopted = decision.found ? await recordFound(record, decision.found, o) : record;
      if (decision.found && !o.apply) unstored.set(record.id, { id: record.id, state: "running", reason: "found running in its own unit or cgroup" });
      if (!o.apply) continue;
      // Its evidence was gathered just now: until the watchers are in place, only a new exit code needs a look.
      // Another full gathering for each of 1,000 adopted tasks took as long as replay itself (profiled).
      const exit = o.store.paths(adopted.id).exit;
      o.watch(adopted, () => readExitMarkerNow(exit).kind !== "empty");
      if (decision.resumeKill) o.resumeKill(record);
    } else {
      toEnd.push({ record, end: decision, endRemnants: decision.endRemnants });
    }
  }
  // Often thousands after a long outage: one batch, so two flushes of the file system instead of two fsyncs a record.
  for (const done of await o.end(toEnd, { apply: o.apply })) {
    report.finished.push({ id: done.id, state: done.state, exitCode: done.exitCode, reason: done.reason ?? "" });
    if (!o.apply) unstored.set(done.id, { id: done.id, state: done.state, reason: done.reason ?? "" });
  }
  report.finished.sort((a, b) => a.id.localeCompare(b.id));
  for (const { record } of items) {
    const u = unstored.get(record.id);
    if (u) report.unstored.push(u);
  }
  return report;
}

/**
 * A task whose spawn was cut short before its pid was recorded, found
 * running in its own unit or cgroup: it is recorded as running, so it is
 * adopted rather than reported lost and stopped.
 */
async function recordFound(record: TaskRecord, found: LocatedTask, o: ReplayAtOpenOptions): Promise<TaskRecord> {
  const running: TaskRecord = {
    ...record,
    state: "running",
    pid: found.pid,
    pgid: found.pid,
    startTime: found.startTime,
    startedAt: (processStartedAt(found.startTime)?.toISOString()) ?? record.startedAt ?? record.createdAt,
    location: found.location,
  };
  // A spawn cut short before its running record had no commandPid yet; the wrapper wrote it all the same.
  const commandPid = record.commandPid ?? readCommandPid(record, o.store.paths(record.id));
  if (commandPid !== null && commandPid !== undefined) running.commandPid = commandPid;
  o.table.claim(running);
  if (!o.apply) return running;
  await o.store.write(running);
  o.table.landed(running);
  return running;
}
