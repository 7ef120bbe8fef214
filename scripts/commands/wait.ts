import { askHolder, defaultStorageRoot, isTerminal, NO_HOLDER, type OutliveError, type TaskRecord } from "../../lib/mod.ts";
import { help, number, parseFlags } from "../cli/flags.ts";
import { lockWaitMs, SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "../cli/supervisor-flags.ts";
import { reachStorage } from "../cli/reach.ts";
import { viewStorage } from "../cli/storage-view.ts";
import { taskSummary, taskTable } from "../cli/task-table.ts";
import { UsageError } from "../cli/usage-error.ts";
import { ENDED_WITHOUT_CODE, WAIT_TIMED_OUT, waitExitStatus } from "../cli/wait-exit.ts";

export const WAIT_HELP = `usage: outlive wait ID [--timeout SECONDS] [--interval MS] [--ack] [--json]

Waits until the task has ended, prints it, and exits with its status:
  0–255  the task exited with that code (so \`outlive wait "$id" && deploy\` does what it says)
  ${ENDED_WITHOUT_CODE}    it ended without an exit code of its own: killed, timed_out, oom_killed, lost
  ${WAIT_TIMED_OUT}    --timeout passed while it still ran
  1      no such task, or the storage could not be read (a message on stderr)
A supervisor holding the storage is asked through its control channel; otherwise the
storage is held only for a moment every --interval ms (default 200), so kill and ps work meanwhile.
--ack acknowledges the completion once it is printed (as outlive ack ID), so prune may remove it.
${SUPERVISOR_FLAGS_HELP}`;

export async function waitCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    ...SUPERVISOR_FLAGS,
    timeout: { type: "string" },
    interval: { type: "string" },
    ack: { type: "boolean" },
  });
  if (values.help) return help(WAIT_HELP);
  if (positionals.length !== 1) throw new UsageError("wait takes exactly one task id");
  const id = positionals[0];
  const interval = values.interval === undefined ? 200 : number("--interval", values.interval);
  const end = values.timeout === undefined ? Infinity : Date.now() + number("--timeout", values.timeout) * 1000;
  const options = supervisorOptions(values);
  const root = options.storage ?? defaultStorageRoot();
  const done = async (record: TaskRecord) => {
    const code = print(record, Boolean(values.json), waitExitStatus(record));
    if (values.ack) {
      await reachStorage(options, { direct: (sup) => sup.ack(id), viaHolder: { op: "ack", args: { id }, result: (r) => r as TaskRecord } }, lockWaitMs(values));
    }
    return code;
  };
  for (;;) {
    const fromHolder = await askHolderUntil(root, id, end);
    if (fromHolder && isTerminal(fromHolder.state)) return done(fromHolder);
    const view = await viewStorage(options);
    const record = view.records.find((r) => r.id === id);
    if (!record) {
      console.error(`outlive: no task ${JSON.stringify(id)} in this storage`);
      return 1;
    }
    if (isTerminal(record.state)) return done(record);
    if (Date.now() >= end) return print(record, Boolean(values.json), WAIT_TIMED_OUT);
    await new Promise((r) => setTimeout(r, interval));
  }
}

/** The holder's answer once the task ended; null when none holds the storage, it closed, or `end` came first. */
async function askHolderUntil(root: string, id: string, end: number): Promise<TaskRecord | null> {
  const signal = end === Infinity ? undefined : AbortSignal.timeout(Math.max(0, end - Date.now()));
  return askHolder(root, "wait", { id }, { signal }).then(
    (answer) => (answer === NO_HOLDER ? null : (answer as TaskRecord)),
    (error) => {
      if ((error as OutliveError).code === "E_CLOSED" || signal?.aborted) return null;
      throw error;
    },
  );
}

function print(record: TaskRecord, json: boolean, code: number): number {
  console.log(json ? JSON.stringify(taskSummary(record)) : taskTable([record]));
  return code;
}
