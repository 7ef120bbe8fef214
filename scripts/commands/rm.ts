import type { KillResult } from "../../lib/mod.ts";
import { help, parseFlags } from "../cli/flags.ts";
import { lockWaitMs, SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "../cli/supervisor-flags.ts";
import { reachStorage } from "../cli/reach.ts";
import { UsageError } from "../cli/usage-error.ts";

export const RM_HELP = `usage: outlive rm [-f] ID… [--json]

Removes finished tasks (record and output), and quarantined records by the name ps shows.
A live task, or a name that is neither, is refused (exit 1) and nothing is removed.
  -f, --force   kill the live ones first (the kill ladder, as outlive kill), then remove them all
${SUPERVISOR_FLAGS_HELP}`;

export async function rmCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { ...SUPERVISOR_FLAGS, force: { type: "boolean", short: "f" } });
  if (values.help) return help(RM_HELP);
  if (positionals.length === 0) throw new UsageError("rm takes one or more task ids or quarantined names");
  const options = supervisorOptions(values);
  const wait = lockWaitMs(values);
  if (values.force) {
    for (const id of positionals) {
      // A finished task's kill is "terminal" and harmless; a name that is no task is left for remove to refuse.
      await reachStorage(options, {
        direct: (sup) => sup.kill(id),
        viaHolder: { op: "kill", args: { id }, result: (r) => r as KillResult },
      }, wait).catch((error) => {
        if ((error as { code?: string }).code !== "E_NO_TASK" && (error as { code?: string }).code !== "E_BAD_ID") throw error;
      });
    }
  }
  const removed = await reachStorage(options, {
    direct: (sup) => sup.remove(positionals),
    viaHolder: { op: "remove", args: { ids: positionals }, result: (r) => r as string[] },
  }, wait);
  console.log(values.json ? JSON.stringify({ removed }) : removed.join("\n"));
  return 0;
}
