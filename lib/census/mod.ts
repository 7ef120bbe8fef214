/**
 * The census: what runs under a process, and whether an idle harness may be
 * ended (field notes §2). Data flows one way: read the launch record before
 * the spawn → snapshot → under a leader → classify → decide → log a refusal.
 *
 * @example
 * ```ts
 * import { spawn } from "node:child_process";
 * import { mkdtempSync } from "node:fs";
 * import { readProcStat } from "../proc/stat.ts";
 * import { logRefusal, mayRetireIdle, readLaunchRecord } from "./mod.ts";
 *
 * const inputs = { agent: "other" as const, cwd: process.cwd(), env: process.env, servers: [] };
 * const record = await readLaunchRecord(inputs); // just before the spawn
 * const harness = spawn("sh", ["-c", "sleep 30 & wait"], { detached: true });
 * await new Promise((r) => setTimeout(r, 200));
 * const leader = { pid: harness.pid!, startTime: readProcStat(harness.pid!)!.startTime };
 * const decision = await mayRetireIdle(leader, record);
 * console.log(decision.verdict); // "keep": the sleep is real work
 * await logRefusal(decision, { dir: mkdtempSync("/tmp/outlive-refusals-"), sessionId: "demo", write: console.log });
 * process.kill(-harness.pid!, "SIGKILL");
 * ```
 *
 * @module
 */

/** Every process now, from `/proc` (or `ps` elsewhere). See {@link takeSnapshot}'s example. */
export { takeSnapshot, type CensusProcess, type ProcessSnapshot, type ProcessSnapshotOptions } from "./scan/snapshot.ts";
/** Parses `ps -axww -o pid=,ppid=,pgid=,stat=,args=`. See its example. */
export { parsePsOutput, PS_ARGS } from "./scan/ps-scan.ts";
/** What runs under a leader, failing closed. See {@link underLeader}'s example. */
export {
  underLeader,
  type CensusMember,
  type CensusResult,
  type CensusSources,
  type CgroupSource,
  type LeaderCensus,
  type LeaderIdentity,
  type MemberReason,
  type UnderLeaderOptions,
} from "./decide/under-leader.ts";
/** The census from every source: parent chain, group, the leader's own cgroup. See {@link takeCensus}'s example. */
export { takeCensus, type CensusOptions } from "./take-census.ts";
/** Which cgroup is the leader's own, failing closed on shared ones. See {@link pickLeaderCgroup}'s example. */
export { pickLeaderCgroup, TASK_CGROUP_NAME, type CgroupChoice, type CgroupPick, type CgroupPickInput } from "./decide/cgroup-choice.ts";
/** Every pid in a cgroup and below it. See {@link readCgroupMembers}'s example. */
export { readCgroupMembers, type CgroupMembers } from "./scan/cgroup-members.ts";
/** Versioned interpreter names (`python3.11`) and npm's rewritten `npx` title. */
export { isInterpreter } from "./recognise/interpreter-name.ts";
export { argvIsNpxTitle, npxTitle } from "./recognise/launcher-title.ts";
/** The MCP servers an agent's configs named at launch. See {@link readLaunchRecord}'s example. */
export {
  readLaunchRecord,
  type AgentKind,
  type AgentKindField,
  type LaunchInputs,
  type LaunchRecord,
  type LaunchRecordOptions,
  type LaunchServer,
} from "./agent-config/launch-record.ts";
/** Claude Code's and Codex's config sources, as pure parsers. */
export { claudeArgvConfigs, claudeJsonPath, type ClaudeArgvConfigs } from "./agent-config/claude-config.ts";
export { codexConfigPath, serversFromCodexToml } from "./agent-config/codex-config.ts";
export { serversFromTable, type SourceServers } from "./agent-config/server-table.ts";
export { checkServerSpec, DEFAULT_INTERPRETERS, type ServerSpec, type SpecCheck } from "./agent-config/server-spec.ts";
export { DEFAULT_MAX_CONFIG_BYTES } from "./agent-config/config-file.ts";
export { findOnPath, lookUpPath, type PathMatch } from "./recognise/program-path.ts";
/** outlive's own processes in a task (wrapper, warden, PTY holder), named in one line. See {@link outliveProcess}'s example. */
export { outliveProcess, outliveProcessTitle, type OutliveProcess, type ProcessShape } from "./recognise/outlive-process.ts";
/** Which processes are servers, the servers' own, or real work. */
export { argvRunsServer, classifyMembers, type ClassifiedMember, type CensusRole } from "./decide/classify.ts";
/** Retire or keep. See {@link mayRetireIdle}'s example. */
export { decideIdle, mayRetireIdle, type BlockingProcess, type IdleDecision, type MayRetireOptions } from "./decide/decision.ts";
/** One refusal line per session per interval, from a stored time. */
export {
  DEFAULT_REFUSAL_INTERVAL_MS,
  isRefusalDue,
  logRefusal,
  refusalLine,
  refusalStampPath,
  type RefusalLogOptions,
  type RefusalLogResult,
} from "./refusal-log.ts";
export { censusError, type CensusError, type CensusErrorCode } from "./census-error.ts";
