// Deep imports, not lib/mod.ts: a command loads only what it uses (not the census and its TOML parser).
import { askHolder, holderAnswers, NO_HOLDER } from "../../lib/control/socket-client.ts";
import type { OutliveError } from "../../lib/errors.ts";
import { isTerminal, type TaskRecord } from "../../lib/store/record/record.ts";
import { defaultStorageRoot } from "../../lib/store/storage/storage-root.ts";
import { help, number, parseFlags, seconds } from "../cli/flags.ts";
import { lockWaitMs, SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "../cli/supervisor-flags.ts";
import { reachStorage } from "../cli/reach.ts";
import { viewStorage } from "../cli/storage-view.ts";
import { taskSummary, taskTable } from "../cli/task-table.ts";
import { forEachId } from "../cli/each-id.ts";
import { noSuchTask } from "../cli/no-such-task.ts";
import { checkStoragePath } from "../cli/storage-path.ts";
import { UsageError } from "../cli/usage-error.ts";
import { ENDED_WITHOUT_CODE, WAIT_TIMED_OUT, waitExitStatus } from "../cli/wait-exit.ts";

export const WAIT_HELP = `usage: outlive wait ID… [--timeout DURATION] [--interval MS] [--ack] [--json]

Waits until the tasks have ended, prints each, and exits with a status:
  0–255  the task exited with that code (so \`outlive wait "$id" && deploy\` does what it says)
  ${ENDED_WITHOUT_CODE}    it ended without an exit code of its own: killed, timed_out, oom_killed, lost, never_started
  ${WAIT_TIMED_OUT}    --timeout passed while it still ran
  1      no such task, no storage, or the storage could not be read (a message on stderr)
With several ids, each is waited for in the order given (--timeout is one deadline for all) and
the status is the first one that is not 0, so \`outlive wait a b && deploy\` deploys only when
every task exited 0. An unknown id is said on stderr and the others are still waited for.
A supervisor holding the storage is asked through its control channel; otherwise the
storage is held only for a moment every --interval ms (default 200), so kill and ps work meanwhile.
--timeout takes 90s, 15m, 2h or seconds (default: no limit).
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
  if (positionals.length === 0) throw new UsageError("wait takes one or more task ids");
  const interval = values.interval === undefined ? 200 : number("--interval", values.interval);
  const end = values.timeout === undefined ? Infinity : Date.now() + seconds("--timeout", values.timeout) * 1000;
  const options = supervisorOptions(values);
  const root = checkStoragePath(options.storage ?? defaultStorageRoot(), { creates: false });
  const json = Boolean(values.json);
  let status = 0;
  const failed = await forEachId("outlive wait", positionals, json, async (id) => {
    const code = await waitFor(id);
    status ||= code;
  });
  return status || failed;

  async function waitFor(id: string): Promise<number> {
    const done = async (record: TaskRecord) => {
      const code = print(record, json, waitExitStatus(record));
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
      if (!record) throw noSuchTask(id, root);
      if (isTerminal(record.state)) return done(record);
      if (Date.now() >= end) return print(record, json, WAIT_TIMED_OUT);
      await new Promise((r) => setTimeout(r, interval));
    }
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
  console.log(json ? JSON.stringify(taskSummary(record)) : taskTable([record], { reason: true }));
  return code;
}
