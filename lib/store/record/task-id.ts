import { randomBytes } from "node:crypto";
import { describeValue, OutliveError } from "../../errors.ts";

/**
 * Task ids become unit and cgroup names, so they are kept to this shape.
 *
 * @example
 * ```ts
 * import { TASK_ID_PATTERN } from "./task-id.ts";
 * console.log(TASK_ID_PATTERN.test("build-1"), TASK_ID_PATTERN.test("../etc")); // true false
 * ```
 */
export const TASK_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

/**
 * `t-` followed by 16 hex digits.
 *
 * @example
 * ```ts
 * import { newTaskId, TASK_ID_PATTERN } from "./task-id.ts";
 * const id = newTaskId();
 * console.log(id, TASK_ID_PATTERN.test(id)); // e.g. "t-3f9c0a1b2d4e5f60" true
 * ```
 */
export function newTaskId(): string {
  return `t-${randomBytes(8).toString("hex")}`;
}

/**
 * Returns the id when it is safe to use as a file, unit and cgroup name;
 * throws E_BAD_ID naming it otherwise.
 *
 * @example
 * ```ts
 * import { checkTaskId } from "./task-id.ts";
 * checkTaskId("build-1"); // "build-1"
 * ```
 */
export function checkTaskId(id: unknown): string {
  if (typeof id !== "string" || !TASK_ID_PATTERN.test(id)) {
    throw new OutliveError(
      "E_BAD_ID",
      `Expected the task id to match ${TASK_ID_PATTERN} (lowercase letters, digits and '-', at most 63, not starting with '-'), got ${describeValue(id)}`,
    );
  }
  return id;
}
