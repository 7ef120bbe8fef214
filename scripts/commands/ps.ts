// Deep imports, not lib/mod.ts: `ps` must start fast and not load the census (and its TOML parser).
import { askHolder, NO_HOLDER } from "../../lib/control/client.ts";
import { ALL_STATES, type TaskState } from "../../lib/store/record.ts";
import { defaultStorageRoot } from "../../lib/store/storage-root.ts";
import { help, parseFlags } from "../cli/flags.ts";
import { SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "../cli/supervisor-flags.ts";
import { viewStorage } from "../cli/storage-view.ts";
import { taskSummary, taskTable } from "../cli/task-table.ts";
import { UsageError } from "../cli/usage-error.ts";

export const PS_HELP = `usage: outlive ps [--state STATE] [--key KEY] [--json]

Lists every task of the storage, brought up to date by replay when no supervisor holds it,
and every record that could not be read (quarantined or from a newer outlive). Says which
supervisor holds the storage, and whether it serves the control channel.
  --state STATE  only tasks in STATE: ${ALL_STATES.join(", ")} (repeatable; default: all)
  --key KEY      only tasks started under KEY (default: all)
${SUPERVISOR_FLAGS_HELP}`;

export async function psCommand(args: string[]): Promise<number> {
  const { values } = parseFlags(args, { ...SUPERVISOR_FLAGS, state: { type: "string", multiple: true }, key: { type: "string" } }, false);
  if (values.help) return help(PS_HELP);
  const states = (values.state as unknown as string[] | undefined) ?? [];
  for (const s of states) {
    if (!ALL_STATES.includes(s as TaskState)) throw new UsageError(`--state takes one of ${ALL_STATES.join(", ")}, got ${JSON.stringify(s)}`);
  }
  const options = supervisorOptions(values);
  const view = await viewStorage(options);
  const records = view.records.filter((r) => (states.length === 0 || states.includes(r.state)) && (values.key === undefined || r.key === values.key));
  const served = view.holder ? (await askHolder(options.storage ?? defaultStorageRoot(), "hello", {}).catch(() => NO_HOLDER)) !== NO_HOLDER : false;
  if (values.json) {
    console.log(JSON.stringify({
      tasks: records.map(taskSummary),
      unreadable: view.unreadable,
      holder: view.holder ? { ...view.holder, controlChannel: served } : null,
      notWritable: view.notWritable,
      unstored: view.unstored,
    }, null, 2));
    return 0;
  }
  if (view.holder) {
    const h = view.holder;
    console.log(`(held by supervisor pid ${h.pid}, incarnation ${h.id}, since ${h.startedAt}; ${served ? "commands go through its control channel" : "it serves no control channel: commands wait for it"})`);
  }
  if (view.notWritable) {
    console.log(`(the storage cannot be written, ${view.notWritable}; shown as replay decided it, not stored: ${view.unstored.map((u) => u.id).join(", ") || "nothing to store"})`);
  }
  console.log(taskTable(records));
  for (const u of view.unreadable) {
    console.log(`unreadable ${u.id}: ${u.problem.reason}${u.quarantinedTo ? ` (moved to ${u.quarantinedTo})` : ""}`);
  }
  return 0;
}
