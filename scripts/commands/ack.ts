import type { TaskRecord } from "../../lib/mod.ts";
import { help, parseFlags } from "../cli/flags.ts";
import { lockWaitMs, SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "../cli/supervisor-flags.ts";
import { reachStorage } from "../cli/reach.ts";
import { taskSummary, taskTable } from "../cli/task-table.ts";
import { UsageError } from "../cli/usage-error.ts";

export const ACK_HELP = `usage: outlive ack ID… [--json]

Marks finished tasks' completions as received: they are not delivered again, and prune
(and the retention at open) may remove them. A live task is refused (exit 1).
${SUPERVISOR_FLAGS_HELP}`;

export async function ackCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, SUPERVISOR_FLAGS);
  if (values.help) return help(ACK_HELP);
  if (positionals.length === 0) throw new UsageError("ack takes one or more task ids");
  const records: TaskRecord[] = [];
  for (const id of positionals) {
    records.push(await reachStorage(supervisorOptions(values), {
      direct: (sup) => sup.ack(id),
      viaHolder: { op: "ack", args: { id }, result: (r) => r as TaskRecord },
    }, lockWaitMs(values)));
  }
  console.log(values.json ? JSON.stringify(records.map(taskSummary), null, 2) : taskTable(records));
  return 0;
}
