import { help, parseFlags } from "../cli/flags.ts";
import { SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "../cli/supervisor-flags.ts";
import { withSupervisor } from "../cli/reach.ts";
import { taskSummary, taskTable } from "../cli/task-table.ts";

export const STOP_ALL_HELP = `usage: outlive stop-all [--json]

Ends every task of the storage (kill ladder, then the cgroup kill) and stops every unit or
cgroup of the prefix whose record is in this storage. Units with no record here are left alone.
${SUPERVISOR_FLAGS_HELP}`;

export async function stopAllCommand(args: string[]): Promise<number> {
  const { values } = parseFlags(args, SUPERVISOR_FLAGS, false);
  if (values.help) return help(STOP_ALL_HELP);
  const records = await withSupervisor(supervisorOptions(values), (sup) => sup.stopAll());
  console.log(values.json ? JSON.stringify(records.map((r) => taskSummary(r)), null, 2) : taskTable(records));
  return 0;
}
