import { readdirSync } from "node:fs";
import { readProcStat } from "../../lib/proc/stat.ts";

/** True while any process, a zombie too, is in group `pgid` (what kill(-pgid, 0) answers). */
export function groupHasAnyMember(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/**
 * The members of group `pgid` that are not yet finished: every process of
 * the group except a zombie handed to PID 1. Such a zombie has ended and
 * waits only for init, which may never reap it (npm as PID 1 of a
 * container or a pid namespace reaps no orphan). A zombie whose parent is
 * anyone else still counts: that parent (a shim, a wrapper) owes the reap,
 * and one that never does is a bug the wait should catch.
 */
export function unfinishedGroupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProcStat(Number(entry));
    if (!stat || stat.pgid !== pgid) continue;
    if (stat.state === "Z" && stat.ppid === 1) continue;
    members.push(stat.pid);
  }
  return members;
}
