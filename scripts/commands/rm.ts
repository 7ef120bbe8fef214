import { help, parseFlags } from "../cli/flags.ts";
import { lockWaitMs, SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "../cli/supervisor-flags.ts";
import { reachStorage } from "../cli/reach.ts";
import { UsageError } from "../cli/usage-error.ts";

export const RM_HELP = `usage: outlive rm ID… [--json]

Removes finished tasks (record and output), and quarantined records by the name ps shows.
A live task, or a name that is neither, is refused (exit 1) and nothing is removed.
${SUPERVISOR_FLAGS_HELP}`;

export async function rmCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, SUPERVISOR_FLAGS);
  if (values.help) return help(RM_HELP);
  if (positionals.length === 0) throw new UsageError("rm takes one or more task ids or quarantined names");
  const removed = await reachStorage(supervisorOptions(values), {
    direct: (sup) => sup.remove(positionals),
    viaHolder: { op: "remove", args: { ids: positionals }, result: (r) => r as string[] },
  }, lockWaitMs(values));
  console.log(values.json ? JSON.stringify({ removed }) : removed.join("\n"));
  return 0;
}
