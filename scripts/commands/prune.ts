import { type PruneResult, parseDuration } from "../../lib/mod.ts";
import { help, parseFlags } from "../cli/flags.ts";
import { lockWaitMs, SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "../cli/supervisor-flags.ts";
import { reachStorage } from "../cli/reach.ts";
import { UsageError } from "../cli/usage-error.ts";

export const PRUNE_HELP = `usage: outlive prune [--older-than DURATION] [--keep N] [--json]

Removes finished tasks whose completion was acknowledged (outlive ack, or the owner's
ack()), oldest first, and the incarnation files no record needs. Never a live task, never
one whose completion was not delivered.
  --older-than DURATION  only those that finished longer ago: 90s, 15m, 12h, 7d, 2w (default: any)
  --keep N               leave the newest N of them (default 0)
${SUPERVISOR_FLAGS_HELP}`;

export async function pruneCommand(args: string[]): Promise<number> {
  const { values } = parseFlags(args, { ...SUPERVISOR_FLAGS, "older-than": { type: "string" }, keep: { type: "string" } }, false);
  if (values.help) return help(PRUNE_HELP);
  const rule: { olderThanSeconds?: number; keep?: number } = {};
  if (values["older-than"] !== undefined) {
    const seconds = parseDuration(values["older-than"]);
    if (seconds === null) throw new UsageError(`--older-than takes a duration such as 90s, 15m, 12h, 7d or 2w, got ${JSON.stringify(values["older-than"])}`);
    rule.olderThanSeconds = seconds;
  }
  if (values.keep !== undefined) {
    if (!/^\d+$/.test(values.keep)) throw new UsageError(`--keep takes a whole number of tasks, got ${JSON.stringify(values.keep)}`);
    rule.keep = Number(values.keep);
  }
  const result = await reachStorage(supervisorOptions(values), {
    direct: (sup) => sup.prune(rule),
    viaHolder: { op: "prune", args: rule, result: (r) => r as PruneResult },
  }, lockWaitMs(values));
  if (values.json) console.log(JSON.stringify(result));
  else console.log(`removed ${result.removed.length} task${result.removed.length === 1 ? "" : "s"}, ${result.incarnationsRemoved} incarnation file${result.incarnationsRemoved === 1 ? "" : "s"}`);
  return 0;
}
