import { isTerminal, type TaskRecord } from "../../lib/store/record/record.ts";
import { defaultStorageRoot } from "../../lib/store/storage/storage-root.ts";
import { TaskStore } from "../../lib/store/task-store.ts";
import { help, parseFlags } from "../cli/flags.ts";
import { lockWaitMs, SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "../cli/supervisor-flags.ts";
import { reachStorage } from "../cli/reach.ts";
import { taskSummary, taskTable } from "../cli/task-table.ts";
import { UsageError } from "../cli/usage-error.ts";
import { forEachId } from "../cli/each-id.ts";
import { checkStoragePath } from "../cli/storage-path.ts";

export const ACK_HELP = `usage: outlive ack ID… [--json]
       outlive ack --all [--json]

Marks finished tasks' completions as received: they are not delivered again, and prune
(and the retention at open) may remove them. A live task is refused (E_TASK_LIVE, exit 1).
  --all   every finished task started from the CLI (origin "cli") not yet acknowledged;
          a supervisor's own tasks are left for it to take (name one by id to ack it)
${SUPERVISOR_FLAGS_HELP}`;

/** What `--all` takes: finished, not yet acknowledged, and started by a CLI, whose completion nobody else will take. */
export function ackedByAll(r: TaskRecord): boolean {
  return isTerminal(r.state) && r.acknowledgedAt === null && r.origin === "cli";
}

export async function ackCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { ...SUPERVISOR_FLAGS, all: { type: "boolean" } });
  if (values.help) return help(ACK_HELP);
  if (values.all && positionals.length > 0) throw new UsageError("ack takes task ids or --all, not both");
  if (!values.all && positionals.length === 0) throw new UsageError("ack takes one or more task ids, or --all");
  const options = supervisorOptions(values);
  // A storage that is not there is said once, not once an id.
  checkStoragePath(options.storage ?? defaultStorageRoot(), { creates: false });
  const ackOne = (id: string) => reachStorage(options, {
    direct: (sup) => sup.ack(id),
    viaHolder: { op: "ack", args: { id }, result: (r) => r as TaskRecord },
  }, lockWaitMs(values));
  let records: TaskRecord[] = [];
  // Several ids go on past one that fails (its error said), as kill, wait and inspect do; the first failure's code.
  const json = values.json === true;
  const ackInto = async (id: string) => {
    records.push(await ackOne(id));
  };
  let code = 0;
  if (values.all) {
    // With no holder, one open: replay first brings every record up to date (a task that ended while no supervisor ran is finished).
    const acked = await reachStorage(options, {
      direct: async (sup) => {
        const out: TaskRecord[] = [];
        for (const r of sup.list().filter(ackedByAll)) out.push(await sup.ack(r.id));
        return out;
      },
      // A holder's records on disk are current: chosen there, each acknowledged through it.
      viaHolder: { op: "list", args: { state: "finished" }, result: () => null },
    }, lockWaitMs(values));
    if (acked) records = acked;
    else code = await forEachId("outlive ack", await idsOnDisk(options.storage ?? defaultStorageRoot()), json, ackInto);
  } else {
    code = await forEachId("outlive ack", positionals, json, ackInto);
  }
  // Nothing acknowledged and something failed: the errors said it all (stdout stays empty, as for one id).
  if (code === 0 || records.length > 0) console.log(values.json ? JSON.stringify(records.map((r) => taskSummary(r)), null, 2) : taskTable(records));
  return code;
}

async function idsOnDisk(root: string): Promise<string[]> {
  const store = await TaskStore.open(root, { readOnly: true });
  return (await store.loadAll({ quarantine: false })).records.filter(ackedByAll).map((r) => r.id);
}
