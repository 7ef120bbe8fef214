import { OutliveError } from "../../lib/errors.ts";

/**
 * The error every command gives for an id its storage does not hold, worded
 * as the supervisor words it, so `kill nosuch` and `send nosuch x` agree (E_NO_TASK, exit 1).
 *
 * @example
 * ```ts
 * import { noSuchTask } from "./no-such-task.ts";
 * console.log(noSuchTask("x", "/srv/outlive").message); // "No task \"x\" in /srv/outlive"
 * ```
 */
export function noSuchTask(id: string, root: string): OutliveError {
  return new OutliveError("E_NO_TASK", `No task ${JSON.stringify(id)} in ${root}`);
}
