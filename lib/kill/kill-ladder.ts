import { inspectPid } from "../proc/identity.ts";
import { DEFAULT_POLL_MS, groupExists, liveGroupMembers, signalGroup, waitUntil } from "./process-group.ts";

/** How a kill went: TERM sufficed within the grace, SIGKILL was needed, nothing was left, or the pid was someone else's. */
export type KillHow = "term" | "kill" | "already-gone" | "pid-reused";

export interface KillTarget {
  pid: number;
  pgid: number;
  startTime: string;
}

export interface KillLadderOptions {
  /** How long TERM gets before KILL. Default 2000 ms. */
  graceMs?: number;
  /** How often to look whether the group is gone. Default 20 ms (`DEFAULT_POLL_MS`). */
  pollMs?: number;
  /** How long to wait for the group to vanish after SIGKILL. Default 5000 ms. */
  killWaitMs?: number;
  /** The placement's last step: end what is left in the task's cgroup (escaped processes) and wait until it is empty. */
  killAll?: () => Promise<void>;
  /**
   * With the leader gone, does this group still belong to the task? Where a
   * placement can tell (a member is in the task's cgroup), a group whose id
   * was handed to an unrelated process after the task's whole group died is
   * never signalled; only `killAll` (by the task's own cgroup) runs then.
   * Default: trusted, as a plain process group offers no such proof.
   */
  ownsGroup?: (members: number[]) => boolean;
  /**
   * Hears each look at the group while the ladder waits for it to go: alive
   * (`at` is just before the look) or gone (`at` is just after it), so the
   * end can be dated by what was seen.
   */
  looked?: (alive: boolean, at: number) => void;
  signal?: AbortSignal;
}

/**
 * SIGTERM to the task's process group, up to `graceMs` for it to go, SIGKILL,
 * then the placement's kill-all. Before any signal the leader's identity is
 * checked: a pid that now belongs to another process is never signalled.
 *
 * @example
 * ```ts
 * import { spawn } from "node:child_process";
 * import { killLadder } from "./kill-ladder.ts";
 * import { readProcStat } from "../proc/stat.ts";
 * const child = spawn("sleep", ["60"], { detached: true });
 * const stat = readProcStat(child.pid!)!;
 * const how = await killLadder({ pid: child.pid!, pgid: child.pid!, startTime: stat.startTime });
 * console.log(how); // "term"
 * ```
 */
export async function killLadder(target: KillTarget, options: KillLadderOptions = {}): Promise<KillHow> {
  const graceMs = options.graceMs ?? 2000;
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const live = inspectPid(target.pid);
  if (live && live.startTime !== target.startTime) {
    // The pid was reused. Only the placement's cgroup (named by the task, not by pid) may still be ended.
    await options.killAll?.();
    return "pid-reused";
  }
  if (!live) {
    // The group id is not handed out again while members remain; but the whole group may have died and
    // the id been reused by an unrelated group since. Where the placement can tell, that group is spared.
    const members = liveGroupMembers(target.pgid);
    if ((members !== null && members.length === 0) || (members && options.ownsGroup && !options.ownsGroup(members))) {
      await options.killAll?.();
      return "already-gone";
    }
  }
  const gone = () => {
    const before = Date.now();
    const exists = groupExists(target.pgid);
    options.looked?.(exists, exists ? before : Date.now());
    return !exists;
  };
  signalGroup(target.pgid, "SIGTERM");
  let how: KillHow = "term";
  if (!(await waitUntil(gone, graceMs, pollMs, options.signal))) {
    how = "kill";
    signalGroup(target.pgid, "SIGKILL");
    await waitUntil(gone, options.killWaitMs ?? 5000, pollMs);
  }
  await options.killAll?.();
  return how;
}
