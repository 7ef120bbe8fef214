import { parseFlags, SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "./supervisor-flags.ts";
import { help } from "./run.ts";
import { viewStorage } from "./storage-view.ts";
import { taskSummary, taskTable } from "./task-table.ts";

export const PS_HELP = `usage: outlive ps [--json]

Lists every task of the storage, brought up to date by replay when no supervisor holds it,
and every record that could not be read (quarantined or from a newer outlive).
${SUPERVISOR_FLAGS_HELP}`;

export async function psCommand(args: string[]): Promise<number> {
  const { values } = parseFlags(args, SUPERVISOR_FLAGS, false);
  if (values.help) return help(PS_HELP);
  const view = await viewStorage(supervisorOptions(values));
  if (values.json) {
    console.log(JSON.stringify({
      tasks: view.records.map(taskSummary),
      unreadable: view.unreadable,
      holder: view.holder,
      notWritable: view.notWritable,
      unstored: view.unstored,
    }, null, 2));
    return 0;
  }
  if (view.holder) console.log(`(held by supervisor pid ${view.holder.pid}, incarnation ${view.holder.id})`);
  if (view.notWritable) {
    console.log(`(the storage cannot be written, ${view.notWritable}; shown as replay decided it, not stored: ${view.unstored.map((u) => u.id).join(", ") || "nothing to store"})`);
  }
  console.log(taskTable(view.records));
  for (const u of view.unreadable) {
    console.log(`unreadable ${u.id}: ${u.problem.reason}${u.quarantinedTo ? ` (moved to ${u.quarantinedTo})` : ""}`);
  }
  return 0;
}
