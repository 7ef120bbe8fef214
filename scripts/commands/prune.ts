import { parseDuration } from "../../lib/retention/duration.ts";
import type { PruneResult } from "../../lib/retention/retention.ts";
import { help, parseFlags } from "../cli/flags.ts";
import { lockWaitMs, SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "../cli/supervisor-flags.ts";
import { reachStorage } from "../cli/reach.ts";
import { UsageError } from "../cli/usage-error.ts";

export const PRUNE_HELP = `usage: outlive prune [--older-than DURATION] [--keep N] [--unacknowledged] [--json]

Removes finished tasks, oldest first: those whose completion was acknowledged (outlive ack,
or the owner's ack()) and those started from the CLI with no supervisor holding the storage
(nobody takes their completion); then the incarnation files no record needs. Never a live
task. Prints each removed id on a line, then how many finished tasks it kept because their
completion waits for an ack.
  --older-than DURATION  only those that finished longer ago: 90s, 15m, 12h, 7d, 2w (default: any)
  --keep N               leave the newest N of them (default 0)
  --unacknowledged       also finished tasks whose completion was never acknowledged,
                         a supervisor's undelivered ones among them (default: kept)
${SUPERVISOR_FLAGS_HELP}`;

export async function pruneCommand(args: string[]): Promise<number> {
  const { values } = parseFlags(args, { ...SUPERVISOR_FLAGS, "older-than": { type: "string" }, keep: { type: "string" }, unacknowledged: { type: "boolean" } }, false);
  if (values.help) return help(PRUNE_HELP);
  const rule: { olderThanSeconds?: number; keep?: number; unacknowledged?: boolean } = {};
  if (values["older-than"] !== undefined) {
    const seconds = parseDuration(values["older-than"]);
    if (seconds === null) throw new UsageError(`--older-than takes a duration such as 90s, 15m, 12h, 7d or 2w, got ${JSON.stringify(values["older-than"])}`);
    rule.olderThanSeconds = seconds;
  }
  if (values.keep !== undefined) {
    if (!/^\d+$/.test(values.keep)) throw new UsageError(`--keep takes a whole number of tasks, got ${JSON.stringify(values.keep)}`);
    rule.keep = Number(values.keep);
  }
  if (values.unacknowledged) rule.unacknowledged = true;
  const result = await reachStorage(supervisorOptions(values), {
    direct: (sup) => sup.prune(rule),
    viaHolder: { op: "prune", args: rule, result: (r) => r as PruneResult },
  }, lockWaitMs(values));
  if (values.json) {
    console.log(JSON.stringify(result));
    return 0;
  }
  for (const id of result.removed) console.log(id);
  console.log(pruneSummary(result));
  return 0;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The last line of a prune: what went, and what stayed only because it waits for an ack (and the flag that takes it too). */
export function pruneSummary(result: PruneResult): string {
  const line = `removed ${plural(result.removed.length, "task")}, ${plural(result.incarnationsRemoved, "incarnation file")}`;
  // A holder from before this field says nothing about what it kept.
  const kept = result.keptUnacknowledged;
  if (kept === undefined || kept === 0) return line;
  return `${line}; kept ${plural(kept, "finished task")} whose completion was never acknowledged (outlive ack ID… takes them; prune --unacknowledged removes them too)`;
}
