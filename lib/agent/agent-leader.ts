import { censusError } from "../census/census-error.ts";
import type { CensusProcess, ProcessSnapshot } from "../census/scan/process-list.ts";
import type { CensusResult, LeaderIdentity } from "../census/decide/under-leader.ts";

export type AgentLeader = { ok: true; leader: LeaderIdentity; process: CensusProcess } | Extract<CensusResult, { ok: false }>;

/**
 * The agent itself among a task's processes: the one child of the task's
 * wrapper that runs the command. The wrapper's other child is its warden
 * (deadline and output bound), a fork of the wrapper with the wrapper's own argv. Fails closed when the
 * wrapper is gone or is not the recorded one, or when there is not exactly
 * one such child (not yet exec'd, already ended).
 *
 * @example
 * ```ts
 * import { agentLeader } from "./agent-leader.ts";
 * const p = (pid: number, ppid: number, argv: string[]) => ({ pid, ppid, pgid: 10, sid: 10, state: "S", startTime: "7", argv, name: "" });
 * const w = ["/bin/sh", "-c", "…", "outlive-task"];
 * const snapshot = { source: "proc" as const, exactArgv: true, complete: true, problems: [], takenAt: 0,
 *   processes: [p(10, 1, w), p(11, 10, w), p(12, 10, ["claude"])] };
 * const r = agentLeader(snapshot, { pid: 10, startTime: "7" });
 * console.log(r.ok && r.leader); // { pid: 12, startTime: "7" }
 * ```
 */
export function agentLeader(snapshot: ProcessSnapshot, wrapper: LeaderIdentity): AgentLeader {
  const head = snapshot.processes.find((p) => p.pid === wrapper.pid);
  if (!head || head.state === "Z" || head.state === "X") {
    return { ok: false, error: censusError("leader-missing", `the task's wrapper (pid ${wrapper.pid}) is not running`) };
  }
  if (wrapper.startTime != null && head.startTime !== wrapper.startTime) {
    return { ok: false, error: censusError("leader-identity-changed", `pid ${wrapper.pid} started at tick ${head.startTime}, not ${wrapper.startTime}: it is not the task's wrapper`) };
  }
  const own = snapshot.processes.filter((p) => p.ppid === head.pid && p.state !== "Z" && p.state !== "X" && !sameArgv(p.argv, head.argv));
  if (own.length !== 1) {
    return {
      ok: false,
      error: censusError("leader-missing", `the task's wrapper (pid ${wrapper.pid}) runs ${own.length} commands, not one, so the harness cannot be named`),
    };
  }
  return { ok: true, leader: { pid: own[0].pid, startTime: own[0].startTime }, process: own[0] };
}

function sameArgv(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
