import type { TaskRecord } from "../../lib/mod.ts";

/** `outlive wait`'s exit status for a task that ended without an exit code of its own: killed, timed out, OOM-killed, lost. */
export const ENDED_WITHOUT_CODE = 125;
/** `outlive wait`'s exit status when its --timeout passed while the task still ran. */
export const WAIT_TIMED_OUT = 124;

/**
 * What `outlive wait` exits with for a terminal task: the task's own exit
 * code when it exited, else ENDED_WITHOUT_CODE, so `outlive wait "$id" &&
 * deploy` deploys only after a task that exited 0. A killed task whose
 * shell reported 143 still did not exit on its own: its state says so.
 *
 * @example
 * ```ts
 * import { waitExitStatus } from "./wait-exit.ts";
 * console.log(waitExitStatus({ state: "exited", exitCode: 3 } as never), waitExitStatus({ state: "killed", exitCode: 143 } as never)); // 3 125
 * ```
 */
export function waitExitStatus(record: Pick<TaskRecord, "state" | "exitCode">): number {
  return record.state === "exited" && record.exitCode !== null ? record.exitCode : ENDED_WITHOUT_CODE;
}
