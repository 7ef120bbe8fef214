import { isTerminal, type TaskRecord } from "../../lib/mod.ts";
import { parseFlags, SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "./supervisor-flags.ts";
import { help, number } from "./run.ts";
import { viewStorage } from "./storage-view.ts";
import { taskSummary, taskTable } from "./task-table.ts";
import { UsageError } from "./usage-error.ts";

export const WAIT_HELP = `usage: outlive wait ID [--timeout SECONDS] [--interval MS] [--json]

Waits until the task has ended and prints it. Holds the storage only for a moment
at a time, so other commands (kill, ps) work meanwhile. Exits 1 if --timeout passes first.
${SUPERVISOR_FLAGS_HELP}`;

export async function waitCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    ...SUPERVISOR_FLAGS,
    timeout: { type: "string" },
    interval: { type: "string" },
  });
  if (values.help) return help(WAIT_HELP);
  if (positionals.length !== 1) throw new UsageError("wait takes exactly one task id");
  const id = positionals[0];
  const interval = values.interval === undefined ? 200 : number("--interval", values.interval);
  const end = values.timeout === undefined ? Infinity : Date.now() + number("--timeout", values.timeout) * 1000;
  const options = supervisorOptions(values);
  for (;;) {
    const view = await viewStorage(options);
    const record = view.records.find((r) => r.id === id);
    if (!record) {
      console.error(`outlive: no task ${JSON.stringify(id)} in this storage`);
      return 1;
    }
    if (isTerminal(record.state)) return print(record, Boolean(values.json), 0);
    if (Date.now() >= end) return print(record, Boolean(values.json), 1);
    await new Promise((r) => setTimeout(r, interval));
  }
}

function print(record: TaskRecord, json: boolean, code: number): number {
  console.log(json ? JSON.stringify(taskSummary(record)) : taskTable([record]));
  return code;
}
