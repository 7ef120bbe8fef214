import { help, parseFlags } from "../cli/flags.ts";
import { SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "../cli/supervisor-flags.ts";
import { withSupervisor } from "../cli/reach.ts";
import { taskSummary, taskTable } from "../cli/task-table.ts";

export const REPLAY_HELP = `usage: outlive replay [--json]

Opens the storage as its supervisor, replays every task (adopts the live ones, records the
real end of the ones that ended), stops the units of finished tasks, and prints what it found.
${SUPERVISOR_FLAGS_HELP}`;

export async function replayCommand(args: string[]): Promise<number> {
  const { values } = parseFlags(args, SUPERVISOR_FLAGS, false);
  if (values.help) return help(REPLAY_HELP);
  const { report, records, placement } = await withSupervisor(supervisorOptions(values), async (sup) => ({
    report: sup.replayReport,
    records: sup.list(),
    placement: sup.placementReason,
  }));
  if (values.json) {
    console.log(JSON.stringify({ placement, report, tasks: records.map((r) => taskSummary(r)) }, null, 2));
    return 0;
  }
  console.log(`placement for new tasks: ${placement}`);
  console.log(
    `adopted ${report.adopted.length}, finished ${report.finished.length}, unchanged ${report.unchanged.length}, ` +
      `deferred ${report.deferred.length}, unreadable ${report.unreadable.length}, cleaned up ${report.cleanedUp.length}, ` +
      `foreign units left alone ${report.foreign.length}`,
  );
  console.log(taskTable(records));
  for (const u of report.unreadable) console.log(`unreadable ${u.id}: ${u.problem.reason}`);
  return 0;
}
