import { join } from "node:path";
import { findCgroup2Mount } from "../placement/cgroup-fs.ts";
import { readCgroup } from "../proc/cgroup.ts";
import { censusError, describeThrown, type CensusError } from "./census-error.ts";
import { pickLeaderCgroup, type CgroupChoice } from "./decide/cgroup-choice.ts";
import { readCgroupMembers } from "./scan/cgroup-members.ts";
import { readProcess } from "./scan/proc-scan.ts";
import type { CensusProcess, ProcessSnapshot } from "./scan/process-list.ts";
import { takeSnapshot, type ProcessSnapshotOptions } from "./scan/snapshot.ts";
import { underLeader, type CensusResult, type CgroupSource, type LeaderIdentity } from "./decide/under-leader.ts";

export interface CensusOptions extends ProcessSnapshotOptions {
  /** A snapshot already taken (one scan for many leaders); by default a new one. */
  snapshot?: ProcessSnapshot;
  /**
   * The cgroup source. `"auto"` (the default) takes the leader's cgroup
   * exactly when it is an outlive task's; `{ path }` names one (a cgroup v2
   * path as `/proc/<pid>/cgroup` writes it, or a folder under the mount);
   * `"none"` leaves it out. A shared cgroup is never taken.
   */
  cgroup?: CgroupChoice;
  /** The cgroup v2 mount; default from `/proc/self/mountinfo`. */
  cgroupMount?: string | null;
  /** The caller's process group, never taken for the leader's. Default: the caller's own. */
  callerPgid?: number;
  /** The caller, whose group and cgroup are never taken. Default `process.pid`. */
  callerPid?: number;
}

/**
 * What runs under `leader` now, from every source that applies: the parent
 * chain, the process group, and the leader's own cgroup. Never throws; any
 * doubt is `ok: false` with the reason (fail closed).
 *
 * @example
 * ```ts
 * import { spawn } from "node:child_process";
 * import { readProcStat } from "../proc/stat.ts";
 * import { takeCensus } from "./take-census.ts";
 * const harness = spawn("sh", ["-c", "sleep 30 & wait"], { detached: true });
 * await new Promise((r) => setTimeout(r, 200));
 * const r = await takeCensus({ pid: harness.pid!, startTime: readProcStat(harness.pid!)!.startTime });
 * console.log(r.ok && r.census.members.length, r.ok && r.census.sources.cgroup); // 1 null (not in a task's cgroup)
 * process.kill(-harness.pid!, "SIGKILL");
 * ```
 */
export async function takeCensus(leader: LeaderIdentity, options: CensusOptions = {}): Promise<CensusResult> {
  const snapshot = options.snapshot ?? (await takeSnapshot(options));
  const callerPid = options.callerPid ?? process.pid;
  const base = { callerPgid: options.callerPgid, callerPid };
  const choice = options.cgroup ?? "auto";
  if (choice === "none") return underLeader(snapshot, leader, { ...base, cgroupNote: "the cgroup source was not asked for (none)" });
  if (snapshot.source !== "proc") return underLeader(snapshot, leader, { ...base, cgroupNote: "the cgroup source needs /proc" });
  const procRoot = options.procRoot ?? "/proc";
  const mount = options.cgroupMount === undefined ? findCgroup2Mount() : options.cgroupMount;
  if (mount === null) return underLeader(snapshot, leader, { ...base, cgroupNote: "no cgroup v2 hierarchy is mounted" });
  let leaderCgroup: string | null;
  let callerCgroup: string | null;
  try {
    leaderCgroup = readCgroup(leader.pid, procRoot);
    callerCgroup = readCgroup(callerPid, procRoot);
  } catch (error) {
    return { ok: false, error: censusError("cgroup-unreadable", `cannot read the cgroup of pid ${leader.pid} or of this process: ${describeThrown(error)}`) };
  }
  const named = typeof choice === "object" ? { path: underMount(choice.path, mount) } : choice;
  const pick = pickLeaderCgroup({ choice: named, leaderCgroup, callerCgroup });
  if (!pick.take) return underLeader(snapshot, leader, { ...base, cgroupNote: pick.reason });
  // Read after the scan: a process started since is read on its own below, one gone since is skipped.
  const read = readCgroupMembers(join(mount, pick.cgroup));
  if (!read.ok) return { ok: false, error: read.error };
  const withLate = addLate(snapshot, read.pids, procRoot);
  const cgroup: CgroupSource = { cgroup: pick.cgroup, pids: read.pids };
  return underLeader(withLate, leader, { ...base, cgroup });
}

/** A cgroup named by its folder under the mount becomes its cgroup path. */
function underMount(path: string, mount: string): string {
  return path.startsWith(`${mount}/`) ? path.slice(mount.length) : path;
}

function addLate(snapshot: ProcessSnapshot, pids: readonly number[], procRoot: string): ProcessSnapshot {
  const known = new Set(snapshot.processes.map((p) => p.pid));
  const late: CensusProcess[] = [];
  const problems: CensusError[] = [];
  for (const pid of pids) {
    if (known.has(pid)) continue;
    const p = readProcess(procRoot, pid, problems);
    if (p) late.push(p);
  }
  if (late.length === 0 && problems.length === 0) return snapshot;
  return {
    ...snapshot,
    processes: [...snapshot.processes, ...late],
    problems: [...snapshot.problems, ...problems],
    complete: snapshot.complete && problems.length === 0,
  };
}
