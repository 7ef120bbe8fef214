import { censusError, type CensusError } from "../census-error.ts";
import { classifyMembers, type ClassifiedMember } from "./classify.ts";
import type { LaunchRecord } from "../agent-config/launch-record.ts";
import { DEFAULT_INTERPRETERS } from "../agent-config/server-spec.ts";
import { takeCensus, type CensusOptions } from "../take-census.ts";
import type { CensusResult, LeaderIdentity, MemberReason } from "./under-leader.ts";

/** The process that keeps a harness up. */
export interface BlockingProcess {
  pid: number;
  argv: readonly string[];
  /** The kernel's short name, for a process whose argv is empty. */
  name: string;
  why: MemberReason;
}

/** Whether an idle harness may be ended, and if not, what stands in the way. */
export type IdleDecision =
  | { verdict: "retire"; servers: { pid: number; server: string }[]; blocking?: undefined; reason?: undefined }
  | { verdict: "keep"; blocking: BlockingProcess; reason?: undefined }
  | { verdict: "keep"; blocking?: undefined; reason: CensusError };

/**
 * The pure decision: given the census under a leader and its launch record
 * (null for a harness adopted after a restart), retire or keep.
 *
 * @example
 * ```ts
 * import { decideIdle } from "./decision.ts";
 * const p = (pid: number, ppid: number, argv: string[]) => ({ pid, ppid, pgid: 10, sid: 1, state: "S", startTime: "1", argv, name: "" });
 * const census = { leader: p(10, 1, ["claude"]), groupTaken: true, exactArgv: true,
 *   members: [{ process: p(11, 10, ["vite"]), why: "child-chain" as const }] };
 * console.log(decideIdle({ ok: true, census }, null).verdict); // "keep"
 * ```
 */
export function decideIdle(result: CensusResult, record: LaunchRecord | null, interpreters: readonly string[] = DEFAULT_INTERPRETERS): IdleDecision {
  if (!result.ok) return { verdict: "keep", reason: result.error };
  const { census } = result;
  if (record !== null && !record.known) {
    // Past the time bound the harness stays up whatever runs under it: an
    // unknown record cannot tell a harness with no servers from one whose
    // servers have not started yet.
    const why = record.notes.find((n) => n.code === "launch-record-unknown")?.message ?? "the launch record is unknown";
    return { verdict: "keep", reason: censusError("launch-record-unknown", why) };
  }
  const classified: ClassifiedMember[] = classifyMembers(census, record?.servers ?? [], interpreters);
  const blocking = classified.find((m) => m.role.kind === "unclaimed");
  if (blocking) {
    const { pid, argv, name } = blocking.process;
    return { verdict: "keep", blocking: { pid, argv, name, why: blocking.why } };
  }
  const servers = classified.flatMap((m) => (m.role.kind === "server" ? [{ pid: m.process.pid, server: m.role.server }] : []));
  return { verdict: "retire", servers };
}

export interface MayRetireOptions extends CensusOptions {
  /** Interpreters that may run a server's program as a script. Default `DEFAULT_INTERPRETERS`. */
  interpreters?: readonly string[];
}

/**
 * May this idle harness be ended now? Takes a census under `leader` and
 * checks every process there (by parent chain, group, and the leader's own
 * cgroup where it has one) against the launch record. Fails closed: any
 * doubt is "keep" with the reason.
 *
 * @example
 * ```ts
 * import { spawn } from "node:child_process";
 * import { readProcStat } from "../../proc/stat.ts";
 * import { mayRetireIdle } from "./decision.ts";
 * const harness = spawn("sleep", ["30"], { detached: true });
 * const leader = { pid: harness.pid!, startTime: readProcStat(harness.pid!)!.startTime };
 * console.log((await mayRetireIdle(leader, null)).verdict); // "retire": nothing runs under it
 * process.kill(harness.pid!, "SIGKILL");
 * ```
 */
export async function mayRetireIdle(leader: LeaderIdentity, launchRecord: LaunchRecord | null, options: MayRetireOptions = {}): Promise<IdleDecision> {
  const result = await takeCensus(leader, options);
  return decideIdle(result, launchRecord, options.interpreters);
}
