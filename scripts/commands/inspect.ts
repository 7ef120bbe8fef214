import { statSync } from "node:fs";
import { readDropped, streamFiles } from "../../lib/output/mod.ts";
import type { TaskRecord } from "../../lib/store/record/record.ts";
import { defaultStorageRoot } from "../../lib/store/storage/storage-root.ts";
import { taskPaths } from "../../lib/store/layout.ts";
import { forEachId } from "../cli/each-id.ts";
import { help, parseFlags } from "../cli/flags.ts";
import { noSuchTask } from "../cli/no-such-task.ts";
import { viewStorage } from "../cli/storage-view.ts";
import { SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "../cli/supervisor-flags.ts";
import { type OutputSizes, taskDetails } from "../cli/task-details.ts";
import { UsageError } from "../cli/usage-error.ts";
import { isTerminal } from "../../lib/store/record/record.ts";
import { portsOfTasks } from "../../lib/ports/task-ports.ts";

export const INSPECT_HELP = `usage: outlive inspect ID… [--json]

Prints a task's whole record: the command as given, cwd, the names of the variables it set
(never their values), key and generation, timeout and deadline, memory cap, placement and
its unit or cgroup, pids, output sizes and dropped bytes, times, and the reason it ended;
its CPU and pids limits and what they did, its readiness condition and when it was ready,
the ports a live task listens on (read from /proc now), its restart policy and restarts.
As ps does, it shows the tasks as they truly are now (replayed when no supervisor holds the storage).
Several ids are shown one after the other, a blank line between; an id the storage does not
hold is said on stderr (no such task, exit 1) and the others are still shown.
  --json   each record exactly as stored (a live task's ports added), one JSON object a line
${SUPERVISOR_FLAGS_HELP}`;

export async function inspectCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, SUPERVISOR_FLAGS);
  if (values.help) return help(INSPECT_HELP);
  if (positionals.length === 0) throw new UsageError("inspect takes one or more task ids");
  const options = supervisorOptions(values);
  const root = options.storage ?? defaultStorageRoot();
  const view = await viewStorage(options);
  const byId = new Map(view.records.map((r) => [r.id, r]));
  let first = true;
  return forEachId("outlive inspect", positionals, values.json === true, async (id) => {
    const record = byId.get(id);
    if (!record) throw noSuchTask(id, root);
    // A live task's ports are read from /proc now; they are never stored.
    const ports = isTerminal(record.state) ? undefined : portsOfTasks([record]).get(record.id);
    if (values.json) return console.log(JSON.stringify(ports ? { ...record, ports } : record));
    if (!first) console.log("");
    first = false;
    console.log(taskDetails(record, outputSizes(root, record), Date.now(), ports));
  });
}

function outputSizes(root: string, record: TaskRecord): OutputSizes {
  const paths = taskPaths(root, record.id);
  const of = (stream: "stdout" | "stderr") => {
    const files = streamFiles(paths, stream);
    try {
      return { bytes: statSync(files.data).size, dropped: readDropped(files.dropped) };
    } catch {
      return null;
    }
  };
  return { stdout: of("stdout"), stderr: of("stderr") };
}
