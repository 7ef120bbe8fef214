import { censusError, type CensusError } from "../census-error.ts";
import { ancestryOf } from "./ancestry.ts";
import type { CensusProcess, ProcessSnapshot } from "../scan/process-list.ts";

/** Why a process counts as under the leader. */
export type MemberReason =
  /** Reached by parent links from the leader (or from a group member). */
  | "child-chain"
  /** In the leader's process group, wherever its parent is now (even init). */
  | "group-member"
  /** In the leader's own cgroup (or below it), whatever its parent, group or session. */
  | "cgroup-member";

export interface CensusMember {
  process: CensusProcess;
  why: MemberReason;
}

/** What runs under one leader, in tree order (children before grandchildren). */
export interface LeaderCensus {
  leader: CensusProcess;
  members: CensusMember[];
  /** False when the leader shares the caller's group, so the group was not taken. */
  groupTaken: boolean;
  /** Whether each argv is exact (see `ProcessSnapshot.exactArgv`). */
  exactArgv: boolean;
  /** The sources used: the parent chain always, the group and the cgroup when taken. */
  sources: CensusSources;
}

export interface CensusSources {
  parentChain: true;
  processGroup: boolean;
  /** The cgroup v2 path whose members were taken, or null. */
  cgroup: string | null;
  /** Why no cgroup was taken, when none was. */
  cgroupNote?: string;
  /**
   * Processes of the leader's group or cgroup that are not under it: its
   * ancestors there (a task's wrapper) and their own forks (the wrapper's
   * warden) with what runs below them. Their pids, for the record.
   */
  notUnder: number[];
}

/** The cgroup source, read by the caller: the cgroup and every pid in it and below it. */
export interface CgroupSource {
  cgroup: string;
  pids: Iterable<number>;
}

export type CensusResult = { ok: true; census: LeaderCensus } | { ok: false; error: CensusError };

/** The leader as the caller recorded it when it started it. */
export interface LeaderIdentity {
  pid: number;
  /** Start time as recorded at spawn; when given, a different one means the pid was reused. */
  startTime?: string | null;
}

export interface UnderLeaderOptions {
  /**
   * The caller's own process group, which is never taken for the leader's
   * (a harness spawned without its own group shares the daemon's, and the
   * daemon's other children are not the harness's). Default: the group of
   * `callerPid` in the snapshot.
   */
  callerPgid?: number;
  /** Default `process.pid`; used only to find `callerPgid`. */
  callerPid?: number;
  /** The leader's own cgroup and its members (see `pickLeaderCgroup`); none by default. */
  cgroup?: CgroupSource;
  /** Why no cgroup is given, for `sources.cgroupNote`. */
  cgroupNote?: string;
}

const isZombie = (p: CensusProcess) => p.state === "Z" || p.state === "X";

/**
 * Every live process under `leader`: its descendants by parent chain,
 * every member of its process group, and every process of its own cgroup
 * when one is given (each with its descendants). Zombies are skipped, and
 * so are the leader's ancestors in the cgroup and their forks.  Fails closed on an incomplete snapshot, a missing or zombie
 * leader, or a leader whose start time is not the recorded one.
 *
 * @example
 * ```ts
 * import { underLeader } from "./under-leader.ts";
 * const p = (pid: number, ppid: number, pgid: number, state = "S") =>
 *   ({ pid, ppid, pgid, sid: 1, state, startTime: "1", argv: ["x"], name: "x" });
 * const snapshot = { source: "proc" as const, exactArgv: true, complete: true, problems: [], takenAt: 0,
 *   processes: [p(10, 1, 10), p(11, 10, 10), p(12, 1, 10), p(13, 10, 13, "Z")] };
 * const r = underLeader(snapshot, { pid: 10, startTime: "1" }, { callerPgid: 1 });
 * console.log(r.ok && r.census.members.map((m) => [m.process.pid, m.why]));
 * // [[11, "child-chain"], [12, "group-member"]]
 * ```
 */
export function underLeader(snapshot: ProcessSnapshot, leader: LeaderIdentity, options: UnderLeaderOptions = {}): CensusResult {
  if (!snapshot.complete) {
    const why = snapshot.problems.map((p) => p.message).join("; ") || "the process list is incomplete";
    return { ok: false, error: censusError("snapshot-incomplete", `the processes could not be listed in full: ${why}`) };
  }
  const byPid = new Map<number, CensusProcess>();
  const children = new Map<number, CensusProcess[]>();
  for (const p of snapshot.processes) {
    byPid.set(p.pid, p);
    const siblings = children.get(p.ppid);
    if (siblings) siblings.push(p);
    else children.set(p.ppid, [p]);
  }
  const head = byPid.get(leader.pid);
  if (!head) return { ok: false, error: censusError("leader-missing", `pid ${leader.pid} is not running`) };
  if (isZombie(head)) return { ok: false, error: censusError("leader-zombie", `pid ${leader.pid} has exited (zombie)`) };
  if (leader.startTime != null) {
    if (head.startTime === null) {
      return {
        ok: false,
        error: censusError("leader-identity-unverifiable", `the ${snapshot.source} snapshot gives no start time, so pid ${leader.pid} cannot be shown to be the recorded process`),
      };
    }
    if (head.startTime !== leader.startTime) {
      return {
        ok: false,
        error: censusError("leader-identity-changed", `pid ${leader.pid} started at tick ${head.startTime}, not ${leader.startTime}: it is another process now`),
      };
    }
  }
  const callerPgid = options.callerPgid ?? byPid.get(options.callerPid ?? process.pid)?.pgid;
  const groupTaken = head.pgid > 0 && head.pgid !== callerPgid;

  const members: CensusMember[] = [];
  const taken = new Set<number>([head.pid]);
  const walk = (from: CensusProcess) => {
    // Breadth first, so a direct child is listed (and blamed) before its children.
    const queue = [from];
    for (let i = 0; i < queue.length; i++) {
      for (const child of children.get(queue[i].pid) ?? []) {
        if (taken.has(child.pid) || isZombie(child)) continue;
        taken.add(child.pid);
        members.push({ process: child, why: "child-chain" });
        queue.push(child);
      }
    }
  };
  walk(head);
  const inCgroup = new Set(options.cgroup?.pids ?? []);
  // The leader's ancestors share its group (a task's wrapper) or cgroup; they and their forks are above it, not under it.
  const ancestry = ancestryOf(head, byPid, children, (p) => inCgroup.has(p.pid) || (groupTaken && p.pgid === head.pgid));
  for (const pid of ancestry) taken.add(pid);
  if (groupTaken) {
    for (const p of snapshot.processes) {
      if (p.pgid !== head.pgid || taken.has(p.pid) || isZombie(p)) continue;
      taken.add(p.pid);
      members.push({ process: p, why: "group-member" });
      walk(p);
    }
  }
  if (options.cgroup) {
    for (const pid of inCgroup) {
      const p = byPid.get(pid);
      if (!p || isZombie(p) || taken.has(pid)) continue;
      taken.add(pid);
      members.push({ process: p, why: "cgroup-member" });
      walk(p);
    }
  }
  const notUnder = [...ancestry].filter((pid) => !isZombie(byPid.get(pid)!));
  const sources: CensusSources = { parentChain: true, processGroup: groupTaken, cgroup: options.cgroup?.cgroup ?? null, notUnder };
  if (!options.cgroup && options.cgroupNote) sources.cgroupNote = options.cgroupNote;
  return { ok: true, census: { leader: head, members, groupTaken, exactArgv: snapshot.exactArgv, sources } };
}

