import type { KillResult } from "../../lib/mod.ts";
import { help, number, parseFlags } from "../cli/flags.ts";
import { lockWaitMs, SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "../cli/supervisor-flags.ts";
import { reachStorage } from "../cli/reach.ts";
import { taskSummary, taskTable } from "../cli/task-table.ts";
import { forEachId } from "../cli/each-id.ts";
import { UsageError } from "../cli/usage-error.ts";

export const KILL_HELP = `usage: outlive kill ID… [--grace MS] [--json]

SIGTERM to the task's process group, up to --grace ms (default 2000), SIGKILL, then the
placement's cgroup kill. Prints how it ended: term, kill, already-gone, pid-reused, terminal.
When a supervisor holds the storage, it runs the ladder (through its control channel).
Several ids are killed one after the other; an id that fails (no such task: exit 1) gets its
line on stderr and the others are still killed. --json prints one {how, task} object a line.
${SUPERVISOR_FLAGS_HELP}`;

export async function killCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { ...SUPERVISOR_FLAGS, grace: { type: "string" } });
  if (values.help) return help(KILL_HELP);
  if (positionals.length === 0) throw new UsageError("kill takes one or more task ids");
  const graceMs = values.grace === undefined ? undefined : number("--grace", values.grace);
  const options = supervisorOptions(values);
  const wait = lockWaitMs(values);
  return forEachId("outlive kill", positionals, values.json === true, async (id) => {
    const result = await reachStorage(options, {
      direct: (sup) => sup.kill(id, { graceMs }),
      viaHolder: { op: "kill", args: { id, graceMs }, result: (r) => r as KillResult },
    }, wait);
    if (values.json) console.log(JSON.stringify({ how: result.how, task: taskSummary(result.record) }));
    else console.log(`${result.how}\n${taskTable([result.record], { reason: true })}`);
  });
}
