import { type FinishedAtSource, isTerminal, type TaskLocation, type TaskRecord, type TaskState } from "../store/record/record.ts";
import { endTime } from "./end-time.ts";
import type { PidEvidence, ReplayEvidence, SpawnerCgroupEvidence } from "./replay-evidence.ts";

export type { PidEvidence, ReplayEvidence, SpawnerCgroupEvidence };


export type ReplayDecision =
  | { kind: "unchanged" }
  | { kind: "adopt"; resumeKill: boolean; found?: { pid: number; startTime: string; location: TaskLocation } }
  | {
    kind: "finish";
    state: TaskState;
    exitCode: number | null;
    reason: string;
    endRemnants: boolean;
    /** When it ended, and what says so (see endTime). */
    finishedAt: string;
    finishedAtSource: FinishedAtSource;
    endedAfter: string | null;
  };

/**
 * The heart of replay, as a pure function: given a record and the evidence
 * gathered about it now, what truly happened. Never claims more than the
 * evidence shows, and never less: a task is "lost" only with the most
 * specific true reason there is.
 *
 * @example
 * ```ts
 * import { decideReplay } from "./decide.ts";
 * // decideReplay(record, { ...evidence, marker: { kind: "code", code: 7, writtenAt } })
 * // → { kind: "finish", state: "exited", exitCode: 7, reason: "exited with code 7", endRemnants: false,
 * //     finishedAt: writtenAt, finishedAtSource: "exit-marker", endedAfter: null }
 * ```
 */
export function decideReplay(record: TaskRecord, ev: ReplayEvidence): ReplayDecision {
  if (isTerminal(record.state)) return { kind: "unchanged" };
  const lastOutput = ev.lastOutputAt ? `; last output at ${ev.lastOutputAt}` : "; it wrote no output";
  const oom = ev.oomKills !== null && ev.oomKills > 0;
  // Which limit it had, when outlive set one: the kernel's count does not say whose limit was reached.
  const capWords = record.memoryMaxBytes !== null ? `; its cap: memory.max ${bytesWords(record.memoryMaxBytes)}, no swap (memory.swap.max 0)` : "";
  const oomWords = `${ev.oomDetail ?? `oom_kill ${ev.oomKills} in memory.events`}${capWords}`;

  if (ev.marker.kind === "code") {
    const code = ev.marker.code;
    const at = ev.marker.writtenAt;
    if (oom && code >= 128) {
      return finish("oom_killed", code, `killed by the kernel's OOM killer (${oomWords})`);
    }
    // The supervisor saw the marker empty before it wrote `killing` (file times are too coarse to order the two).
    if (record.state === "killing") {
      return finish(record.killState ?? "killed", code, `${record.killReason ?? "killed by outlive"}; exit code ${code} after the signal`);
    }
    if (ev.timedOutAt && ev.timedOutAt <= at) {
      return finish("timed_out", code, `ended by its watchdog at its deadline ${record.deadlineAt} (${limitWords(record)}); exit code ${code}`);
    }
    if (code >= 128 && at >= record.deadlineAt) {
      return finish("timed_out", code, `ended by ${signalName(code - 128)} after its deadline ${record.deadlineAt} (${limitWords(record)}) passed: the backstop ended it`);
    }
    // A clean shutdown or reboot sent the TERM: the code is real, and who ended the task is said.
    const byShutdown = ev.hostStopping
      ? "; the host's shutdown ended it (its wrapper got SIGTERM while systemd was stopping the system)"
      // Asked and not answered (a slow machine at its shutdown, most likely): said, neither claimed nor denied.
      : ev.hostUnanswered
      ? `; a SIGTERM came from outside outlive, and whether the host was shutting down went unanswered (${ev.hostUnanswered})`
      : "";
    // Its exit code is its end; what it started and left behind is not ended, but said.
    const leftRunning = ev.remnants ? "; processes it started were still running in its process group or cgroup when it ended, and were left running" : "";
    return finish("exited", code, `${exitWords(code)}${byShutdown}${leftRunning}`);
  }

  // The shim refused the task before anything of the user's ran (exit 125, no code): not lost, never started,
  // in the shim's own words. Only once the shim is gone (it writes the line just before it exits) and when
  // nothing of the task's was found running elsewhere.
  const shimGone = ev.pid === "absent" || ev.pid === "reused" || (record.state === "starting" && record.pid === null);
  if (ev.shimRefused && shimGone && !ev.located) {
    return finish("never_started", null, `never started: outlive-shim refused it (${ev.shimRefused}); its command did not run`, true);
  }

  if (record.state === "starting") {
    // A live state is not flushed to disk (only an end is): after a host crash, `starting` may be all that
    // reached the disk of a task that had been running. The boot id says what is known, no more.
    if (ev.bootIdNow !== record.bootId) {
      return finish("lost", null, `the host rebooted (boot id changed) while it was starting or running; no exit code was recorded${lastOutput}`);
    }
    // The spawn got through after all: the wrapper runs in the task's own unit or cgroup.
    if (ev.located) return { kind: "adopt", resumeKill: false, found: ev.located };
    // Nothing of the command ever ran: the task is not lost, it never started, and whoever asked for it may ask again.
    if (ev.commandStarted === false) {
      return finish("never_started", null, `never started: the supervisor stopped while starting it, before its command ran (requested at ${record.createdAt}; no command pid, output or exit code)`, true);
    }
    return finish("lost", null, "spawn did not complete (the supervisor stopped while starting it)", true);
  }
  if (ev.pid === "same") return { kind: "adopt", resumeKill: record.state === "killing" };

  const noCode = ev.marker.kind === "garbage" ? `its exit marker is unreadable (${JSON.stringify(ev.marker.text)})` : "no exit code";
  if (ev.pid === "same-elsewhere") {
    return finish("lost", null, `its process (pid ${record.pid}) still runs but left the task's cgroup; not adopted and not signalled${lastOutput}`);
  }
  if (record.state === "killing") {
    return finish(record.killState ?? "killed", null, `${record.killReason ?? "killed by outlive"} (${noCode}: it ended while being killed)`, true);
  }
  if (oom) {
    return finish("oom_killed", null, `killed by the kernel's OOM killer (${oomWords})${lastOutput}`, true);
  }
  if (ev.timedOutAt) {
    return finish("timed_out", null, `ended by its watchdog at its deadline ${record.deadlineAt} (${limitWords(record)})${lastOutput}`, true);
  }
  const reused = ev.pid === "reused" ? `; pid ${record.pid} now belongs to another process (pid reused), which was not touched` : "";
  const remnants = ev.remnants ? "; processes it left in its group or cgroup were ended" : "";
  if (ev.bootIdNow !== record.bootId) {
    return finish("lost", null, `the host rebooted while it ran (boot id changed), ${noCode}${lastOutput}`);
  }
  const sharedCgroup = record.supervisorCgroup !== null && record.location.cgroup === record.supervisorCgroup;
  const cgroupKilled = ev.spawnerCgroup?.kind === "removed" || ev.spawnerCgroup?.kind === "emptied";
  if (sharedCgroup && ev.spawnerAlive === false && !ev.remnants && cgroupKilled) {
    const how = ev.spawnerCgroup?.kind === "removed" ? "that cgroup is gone" : "nothing that ran in that cgroup before it survived";
    return finish(
      "lost",
      null,
      `killed with the supervisor's cgroup when the supervisor restarted at ${ev.restartedAt}: it ran in that cgroup (${record.supervisorCgroup}, placement ${record.placement}), ${how}, and it ended with ${noCode} while that supervisor went down${lastOutput}${reused}`,
    );
  }
  const notTheCgroup = sharedCgroup && ev.spawnerAlive === false && ev.spawnerCgroup && !cgroupKilled
    ? `; not the supervisor's cgroup: ${spawnerCgroupWords(ev.spawnerCgroup)}`
    : "";
  return finish("lost", null, `ended without an exit code (${noCode}: killed by a signal outlive did not send, such as SIGKILL)${notTheCgroup}${lastOutput}${reused}${remnants}`, true);

  function finish(state: TaskState, exitCode: number | null, reason: string, endRemnants = false): ReplayDecision {
    const at = endTime(record, ev);
    // Noticed only later: the reason says the window, the record its two ends.
    // A process that still runs outside the task's cgroup has no window: the task is lost, not its process ended.
    const window = at.finishedAtSource === "seen-gone" && at.endedAfter !== null && ev.pid !== "same-elsewhere"
      ? `; ended between ${at.endedAfter} and ${at.finishedAt}`
      : "";
    return { kind: "finish", state, exitCode, reason: `${reason}${window}`, endRemnants: endRemnants && ev.remnants, ...at };
  }
}

/** "64 MiB" for a whole number of MiB, else the bytes. */
function bytesWords(n: number): string {
  return n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : `${n} bytes`;
}

function spawnerCgroupWords(ev: SpawnerCgroupEvidence): string {
  if (ev.kind === "root") return "it shared the root cgroup, which nothing kills";
  if (ev.kind === "survivors") return `that cgroup was not killed (${ev.detail})`;
  if (ev.kind === "unknown") return `whether that cgroup was killed is unknown (${ev.why})`;
  return "";
}

function limitWords(record: TaskRecord): string {
  return record.deadlineIsTimeout && record.timeoutSeconds !== null
    ? `its timeout of ${record.timeoutSeconds} s`
    : "the default ceiling";
}

const SIGNALS: Record<number, string> = { 1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 6: "SIGABRT", 9: "SIGKILL", 13: "SIGPIPE", 15: "SIGTERM" };

function signalName(n: number): string {
  return SIGNALS[n] ?? `signal ${n}`;
}

/**
 * "exited with code 0", or for 128+n "ended by SIGTERM (exit code 143)".
 *
 * @example
 * ```ts
 * import { exitWords } from "./decide.ts";
 * console.log(exitWords(3)); // "exited with code 3"
 * console.log(exitWords(143)); // "ended by SIGTERM (exit code 143)"
 * ```
 */
export function exitWords(code: number): string {
  return code > 128 && code < 160 ? `ended by ${signalName(code - 128)} (exit code ${code})` : `exited with code ${code}`;
}
