// Deep imports, not lib/mod.ts: `ps` must start fast and not load the census (and its TOML parser).
import { askHolder, holderAnswers, NO_HOLDER } from "../../lib/control/socket-client.ts";
import { ALL_STATES, isTerminal, type TaskState } from "../../lib/store/record/record.ts";
import { defaultStorageRoot } from "../../lib/store/storage/storage-root.ts";
import { help, parseFlags } from "../cli/flags.ts";
import { SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "../cli/supervisor-flags.ts";
import { viewStorage } from "../cli/storage-view.ts";
import { taskSummary, taskTable } from "../cli/task-table.ts";
import { UsageError } from "../cli/usage-error.ts";
import { portsOfTasks } from "../../lib/ports/task-ports.ts";

export const PS_HELP = `usage: outlive ps [-a] [-q] [--state STATE] [--key KEY] [--no-trunc] [--no-ports] [--json]

Lists the tasks of the storage, brought up to date by replay when no supervisor holds it,
and every record that could not be read (quarantined or from a newer outlive). Says which
supervisor holds the storage, and whether it serves the control channel.
By default: every live task and every finished one whose completion was not acknowledged
(the news); -a adds the acknowledged ones. Columns: ID, STATE, EXIT, PID (the command's own
pid when known), COMMAND (cut to 40 characters), TIME (up 3m12s while it runs; ran 12s, 5m ago
once finished), KEY, PORTS (the TCP and UDP sockets a live task's processes listen on, read
from /proc: 127.0.0.1:5173, [::]:8080, 0.0.0.0:53/udp).
  -a, --all      also the finished tasks whose completion was acknowledged
  -q, --quiet    only the ids, one a line
  --state STATE  only tasks in STATE: ${ALL_STATES.join(", ")} (repeatable; default: all)
  --key KEY      only tasks started under KEY (default: all)
  --no-trunc     the whole command
  --no-ports     leave the ports out (no /proc scan for them)
  --json         every task --state and --key let through (-a or not), times ISO UTC
${SUPERVISOR_FLAGS_HELP}`;

export async function psCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    ...SUPERVISOR_FLAGS,
    state: { type: "string", multiple: true },
    key: { type: "string" },
    all: { type: "boolean", short: "a" },
    quiet: { type: "boolean", short: "q" },
    "no-trunc": { type: "boolean" },
    "no-ports": { type: "boolean" },
  });
  if (values.help) return help(PS_HELP);
  if (positionals.length > 0) throw new UsageError(`ps takes no task ids, got ${JSON.stringify(positionals.join(" "))}; outlive inspect ID… shows tasks whole`);
  if (values.quiet && values.json) throw new UsageError("-q and --json: give one of them");
  const states = (values.state as unknown as string[] | undefined) ?? [];
  for (const s of states) {
    if (!ALL_STATES.includes(s as TaskState)) throw new UsageError(`--state takes one of ${ALL_STATES.join(", ")}, got ${JSON.stringify(s)}`);
  }
  const options = supervisorOptions(values);
  const view = await viewStorage(options);
  const records = view.records.filter((r) => (states.length === 0 || states.includes(r.state)) && (values.key === undefined || r.key === values.key));
  if (values.json) {
    const served = await serves(view.holder !== null, options.storage ?? defaultStorageRoot());
    const ports = values["no-ports"] ? new Map() : portsOfTasks(records.filter((r) => !isTerminal(r.state)));
    console.log(JSON.stringify({
      tasks: records.map((r) => taskSummary(r, ports.get(r.id))),
      unreadable: view.unreadable,
      holder: view.holder ? { ...view.holder, controlChannel: served } : null,
      notWritable: view.notWritable,
      unstored: view.unstored,
    }, null, 2));
    return 0;
  }
  const shown = values.all ? records : records.filter((r) => !isTerminal(r.state) || r.acknowledgedAt === null);
  if (values.quiet) {
    for (const r of shown) console.log(r.id);
    return 0;
  }
  const served = await serves(view.holder !== null, options.storage ?? defaultStorageRoot());
  if (view.holder) {
    const h = view.holder;
    console.log(`(held by supervisor pid ${h.pid}, incarnation ${h.id}, since ${h.startedAt}; ${served ? "commands go through its control channel" : "it serves no control channel: commands wait for it"})`);
  }
  if (view.notWritable) {
    console.log(`(the storage cannot be written, ${view.notWritable}; shown as replay decided it, not stored: ${view.unstored.map((u) => u.id).join(", ") || "nothing to store"})`);
  }
  const ports = values["no-ports"] ? undefined : portsOfTasks(shown.filter((r) => !isTerminal(r.state)));
  console.log(taskTable(shown, { commandWidth: values["no-trunc"] ? Infinity : 40, ports }));
  const hidden = records.length - shown.length;
  if (hidden > 0) console.log(`(${hidden} finished task${hidden === 1 ? "" : "s"} already acknowledged not shown; ps -a shows ${hidden === 1 ? "it" : "them"})`);
  for (const u of view.unreadable) {
    console.log(`unreadable ${u.id}: ${u.problem.reason}${u.quarantinedTo ? ` (moved to ${u.quarantinedTo})` : ""}`);
  }
  return 0;
}

/** Whether the holder, when there is one, answers on the control channel. */
async function serves(held: boolean, root: string): Promise<boolean> {
  return held ? await holderAnswers(root) : false;
}
