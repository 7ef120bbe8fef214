import type { TaskRecord } from "../../../lib/mod.ts";
import { isTerminal } from "../../../lib/mod.ts";
import type { SoakTask } from "./task-mix.ts";

/** What the soak knows about one task beyond its record. */
export interface TaskTruth {
  task: SoakTask;
  /** The run request got a reply: the task was started (a restart may have landed before the reply). */
  acknowledgedRun: boolean;
  /** The soak asked for it to be killed. */
  killRequested: boolean;
}

export interface Violation {
  id: string;
  rule: string;
  detail: string;
}

/**
 * Checks each record against what the task was made to do. True outcomes
 * only: an `exited` task has the code it was made to exit with; `killed`
 * only when a kill was asked for or the final stop ended it; `lost` only for
 * a spawn that a restart cut short (never for a started task in a cgroup
 * placement, which must survive every restart). A task whose completion was
 * delivered and acknowledged may be gone from the storage (retention removes
 * finished, acknowledged tasks beyond its `keep`); the record its completion
 * carried is then checked instead, as of when it was delivered. A task gone
 * without a completion is a lost record.
 */
export function checkOutcomes(
  records: TaskRecord[],
  truths: Map<string, TaskTruth>,
  opts: { finalStop: boolean; survivingPlacement: boolean },
  acknowledged: ReadonlyMap<string, TaskRecord> = new Map(),
): Violation[] {
  const violations: Violation[] = [];
  const byId = new Map(records.map((r) => [r.id, r]));
  for (const [id, truth] of truths) {
    let r = byId.get(id);
    let finalStop = opts.finalStop;
    if (!r) {
      r = acknowledged.get(id);
      // Delivered before the final stop, if there was one: that stop did not end it.
      finalStop = false;
    }
    if (!r) {
      if (truth.acknowledgedRun) violations.push({ id, rule: "no record lost", detail: "started, but no record in the storage, and no completion delivered" });
      continue;
    }
    if (!isTerminal(r.state)) {
      if (finalStop) violations.push({ id, rule: "one terminal outcome", detail: `still ${r.state} after the final stop` });
      continue;
    }
    const expected = truth.task.expectedExit;
    if (r.state === "exited" && r.exitCode !== expected) {
      // A TERM from a kill or a stop may end a task with 143 before its own exit: only then is another code true.
      const killedByUs = (truth.killRequested || finalStop) && r.exitCode !== null && r.exitCode >= 128;
      if (!killedByUs) violations.push({ id, rule: "true exit code", detail: `exited ${r.exitCode}, was made to exit ${expected}` });
    }
    if (r.state === "killed" && !truth.killRequested && !finalStop) {
      violations.push({ id, rule: "killed only on request", detail: r.reason ?? "" });
    }
    if (r.state === "lost") {
      const cutShort = /spawn did not complete/.test(r.reason ?? "");
      if (!cutShort && opts.survivingPlacement) violations.push({ id, rule: "no task lost in a surviving placement", detail: r.reason ?? "" });
      if (/fate unknown/i.test(r.reason ?? "")) violations.push({ id, rule: "never 'fate unknown'", detail: r.reason ?? "" });
    }
    // A task whose run returned was running: it can end in many ways, but not as one that never started.
    if (r.state === "never_started" && truth.acknowledgedRun) violations.push({ id, rule: "never_started only for a run cut short", detail: r.reason ?? "" });
    if (r.state === "timed_out" && !r.timeoutSeconds) violations.push({ id, rule: "timed out only with a timeout", detail: r.reason ?? "" });
  }
  return violations;
}

/**
 * Completions: each acknowledged completion is delivered once at most (a
 * completion delivered but not yet acknowledged when a restart lands may be
 * delivered again: that is the contract), and every terminal task is delivered.
 */
export function checkCompletions(
  deliveries: Array<{ id: string; acknowledged: boolean }>,
  terminalIds: string[],
): Violation[] {
  const violations: Violation[] = [];
  const ackedAt = new Map<string, number>();
  deliveries.forEach((d, i) => {
    const first = ackedAt.get(d.id);
    if (first !== undefined) violations.push({ id: d.id, rule: "no completion delivered twice", detail: `delivered again (#${i}) after it was acknowledged (#${first})` });
    if (d.acknowledged && first === undefined) ackedAt.set(d.id, i);
  });
  const delivered = new Set(deliveries.map((d) => d.id));
  for (const id of terminalIds) if (!delivered.has(id)) violations.push({ id, rule: "no completion lost", detail: "terminal but never delivered" });
  return violations;
}
