import type { KillResult } from "../../lib/mod.ts";
import { help, number, parseFlags } from "../cli/flags.ts";
import { lockWaitMs, SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "../cli/supervisor-flags.ts";
import { reachStorage } from "../cli/reach.ts";
import { taskSummary, taskTable } from "../cli/task-table.ts";
import { UsageError } from "../cli/usage-error.ts";

export const KILL_HELP = `usage: outlive kill ID [--grace MS] [--json]

SIGTERM to the task's process group, up to --grace ms (default 2000), SIGKILL, then the
placement's cgroup kill. Prints how it ended: term, kill, already-gone, pid-reused, terminal.
When a supervisor holds the storage, it runs the ladder (through its control channel).
${SUPERVISOR_FLAGS_HELP}`;

export async function killCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { ...SUPERVISOR_FLAGS, grace: { type: "string" } });
  if (values.help) return help(KILL_HELP);
  if (positionals.length !== 1) throw new UsageError("kill takes exactly one task id");
  const graceMs = values.grace === undefined ? undefined : number("--grace", values.grace);
  const result = await reachStorage(supervisorOptions(values), {
    direct: (sup) => sup.kill(positionals[0], { graceMs }),
    viaHolder: { op: "kill", args: { id: positionals[0], graceMs }, result: (r) => r as KillResult },
  }, lockWaitMs(values));
  if (values.json) console.log(JSON.stringify({ how: result.how, task: taskSummary(result.record) }));
  else console.log(`${result.how}\n${taskTable([result.record])}`);
  return 0;
}
