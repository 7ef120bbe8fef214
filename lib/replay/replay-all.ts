import { forEachBounded } from "../pool/for-each-bounded.ts";
import { isTerminal, type TaskRecord } from "../store/record/record.ts";
import { decideReplay, type ReplayDecision, type ReplayEvidence } from "./decide.ts";

export type ReplayItem =
  | { record: TaskRecord; decision: ReplayDecision }
  /** Gathering the evidence failed or took longer than the bound; the record is left as it was. */
  | { record: TaskRecord; decision: { kind: "deferred"; reason: string } };

export interface ReplayAllOptions {
  /** Records looked at at once. Default 32. */
  concurrency?: number;
  /** The most one record may take, so one stuck task cannot hold up startup. Default 5000 ms. */
  perTaskMs?: number;
}

/**
 * Decides every record, in parallel with a bound per task. Terminal records
 * are decided without any I/O.
 *
 * @example
 * ```ts
 * import type { TaskRecord } from "../store/record/record.ts";
 * import { replayAll } from "./replay-all.ts";
 * // Two records as TaskStore.loadAll returns them, cut down to what this example needs.
 * const done = { id: "t-1", state: "exited" } as TaskRecord;
 * const running = { id: "t-2", state: "running" } as TaskRecord;
 * const gather = async (): Promise<never> => {
 *   throw new Error("cannot read /proc here");
 * };
 * const items = await replayAll([done, running], gather, { perTaskMs: 1000 });
 * console.log(items.map((item) => item.decision.kind)); // ["unchanged", "deferred"]: a terminal record needs no evidence
 * ```
 */
export async function replayAll(
  records: TaskRecord[],
  gather: (record: TaskRecord) => Promise<ReplayEvidence>,
  options: ReplayAllOptions = {},
): Promise<ReplayItem[]> {
  const concurrency = options.concurrency ?? 32;
  const perTaskMs = options.perTaskMs ?? 5000;
  const items: ReplayItem[] = new Array(records.length);
  const pending: number[] = [];
  records.forEach((record, i) => {
    if (isTerminal(record.state)) items[i] = { record, decision: { kind: "unchanged" } };
    else pending.push(i);
  });
  await forEachBounded(pending, concurrency, async (i) => {
    const record = records[i];
    try {
      const evidence = await withBound(gather(record), perTaskMs, record.id);
      items[i] = { record, decision: decideReplay(record, evidence) };
    } catch (error) {
      items[i] = { record, decision: { kind: "deferred", reason: (error as Error).message } };
    }
  });
  return items;
}

function withBound<T>(promise: Promise<T>, ms: number, id: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`gathering evidence for ${id} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}
