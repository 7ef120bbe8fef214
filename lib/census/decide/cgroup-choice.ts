/**
 * Which cgroup, if any, the census may take as the leader's own. Pure: the
 * caller reads the cgroup paths (`/proc/<pid>/cgroup`'s `0::` line).
 *
 * @module
 */

/** `auto`: the leader's cgroup when it is an outlive task's; `none`; or a cgroup the caller names. */
export type CgroupChoice = "auto" | "none" | { path: string };

/**
 * The last component of an outlive task's cgroup: `<prefix>-task-<id>` (cgroup-v2) or `<prefix>-task-<id>.scope` (systemd).
 *
 * @example
 * ```ts
 * import { TASK_CGROUP_NAME } from "./cgroup-choice.ts";
 * console.log(TASK_CGROUP_NAME.test("outlive-task-t-1.scope"), TASK_CGROUP_NAME.test("session-2.scope")); // true false
 * ```
 */
export const TASK_CGROUP_NAME = /^[a-z][a-z0-9-]{0,30}-task-[a-z0-9][a-z0-9-]{0,62}(?:\.scope)?$/;

/** Cgroups that systemd shares among unrelated processes: never one process's own. */
const SHARED_NAME = /^(?:session-[^/]+\.scope|init\.scope|user@\d+\.service|[^/]+\.slice)$/;

export type CgroupPick =
  | { take: true; cgroup: string; why: "outlive task" | "named by the caller" }
  | { take: false; reason: string };

export interface CgroupPickInput {
  choice: CgroupChoice;
  /** The leader's cgroup v2 path; null when it has none (no cgroup v2, or gone). */
  leaderCgroup: string | null;
  /** The caller's own cgroup v2 path; null when unknown (then nothing is taken). */
  callerCgroup: string | null;
}

const within = (path: string, cgroup: string) => path === cgroup || path.startsWith(cgroup === "/" ? "/" : `${cgroup}/`);
const lastPart = (path: string) => path.slice(path.lastIndexOf("/") + 1);

/**
 * Picks the cgroup whose every process counts as under the leader, or says
 * why none is taken. Fails closed: the root, a login session, a slice, a
 * user manager, and any cgroup holding the caller are shared with processes
 * that are not the leader's, so they are never taken, whoever names them.
 *
 * @example
 * ```ts
 * import { pickLeaderCgroup } from "./cgroup-choice.ts";
 * const callerCgroup = "/user.slice/session-2.scope";
 * console.log(pickLeaderCgroup({ choice: "auto", leaderCgroup: "/outlive/outlive-task-t-1", callerCgroup }));
 * // { take: true, cgroup: "/outlive/outlive-task-t-1", why: "outlive task" }
 * console.log(pickLeaderCgroup({ choice: "auto", leaderCgroup: callerCgroup, callerCgroup }).take); // false
 * ```
 */
export function pickLeaderCgroup(input: CgroupPickInput): CgroupPick {
  const { choice, leaderCgroup, callerCgroup } = input;
  if (choice === "none") return { take: false, reason: "the cgroup source was not asked for (none)" };
  if (leaderCgroup === null) return { take: false, reason: "the leader has no cgroup v2 path" };
  let cgroup: string;
  let why: "outlive task" | "named by the caller";
  if (choice === "auto") {
    if (!TASK_CGROUP_NAME.test(lastPart(leaderCgroup))) {
      return { take: false, reason: `the leader's cgroup ${leaderCgroup} is not an outlive task's (<prefix>-task-<id>)` };
    }
    cgroup = leaderCgroup;
    why = "outlive task";
  } else {
    cgroup = choice.path.length > 1 ? choice.path.replace(/\/+$/, "") : choice.path;
    why = "named by the caller";
    if (!within(leaderCgroup, cgroup)) return { take: false, reason: `the leader runs in ${leaderCgroup}, not in ${cgroup} or below it` };
  }
  if (cgroup === "/") return { take: false, reason: "the root cgroup is shared by every process" };
  if (SHARED_NAME.test(lastPart(cgroup))) return { take: false, reason: `${cgroup} is shared by unrelated processes (a session, slice or manager)` };
  if (callerCgroup === null) return { take: false, reason: `this process's own cgroup is unknown, so ${cgroup} cannot be shown not to hold it` };
  if (within(callerCgroup, cgroup)) return { take: false, reason: `${cgroup} holds this process too (it is in ${callerCgroup})` };
  return { take: true, cgroup, why };
}
