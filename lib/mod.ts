/**
 * outlive: background commands that outlive a restart of their supervisor,
 * and the truth about what happened to them.
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { Supervisor } from "./mod.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-mod-example-"));
 * // Standalone: tasks run as process groups. `mode: "daemon"` puts each in its own
 * // systemd scope or cgroup instead, where the machine allows it (systemd, or root).
 * const sup = await Supervisor.open({ storage, mode: "standalone" });
 * const task = await sup.run({ shell: "echo building; sleep 1; exit 0", timeoutSeconds: 60 });
 * console.log((await sup.wait(task.id)).state); // "exited"
 * await sup.close();
 * rmSync(storage, { recursive: true });
 * ```
 */

// Every export is named here on purpose: each is a promise users build on. test/package/exports.test.ts
// lists the package's runtime exports as a user imports them, so a new one is a decision. Helpers with no
// promise are in lib/internal.ts (`outlive/internal`).

// The supervisor: open a storage, run, wait, kill, hear completions, drain.
export {
  Supervisor,
  type DrainReason,
  type EnsureOutcome,
  type KillResult,
  type ListeningPort,
  type ReplayReport,
  type RunResult,
} from "./supervisor/supervisor.ts";
// Dev servers: when a task is ready (and what dates it), its restart policy, its CPU and pids limits.
export { READY_AT_SOURCES, type ReadyAtSource, type ReadySpec } from "./ready/ready-spec.ts";
export type { RestartPolicy } from "./start/restart-policy.ts";
export type { LimitEvents } from "./limits/limits.ts";
export type { PlacementChoice, RunSpec, SupervisorMode, SupervisorOptions } from "./supervisor/options.ts";
export { TASK_STEPS, type StepListener, type TaskStep } from "./start/task-steps.ts";
export type { KillRequest } from "./kill/task-kills.ts";
export type { OutputChunk, OutputOptions, OutputStream } from "./output/request.ts";
export type { PruneResult } from "./retention/retention.ts";
export { DEFAULT_RETENTION } from "./retention/options.ts";
export type { PruneRule } from "./retention/choose-prune.ts";
export { DEFAULT_PTY_SIZE, MAX_PTY_SIDE, type PtySize } from "./pty/size.ts";
export { OutliveError, type OutliveErrorCode } from "./errors.ts";

// What this machine offers: every placement, whether it works here, and what auto would choose.
export { probe, type ProbeOptions, type ProbeResult } from "./placement/probe.ts";
export type { MemoryEvents, Placement, PlacementProbe, PlacementTask, SpawnPlan } from "./placement/placement.ts";

// The task's record on disk, and where its files are.
export {
  ALL_STATES,
  FINISHED_AT_SOURCES,
  isTerminal,
  PLACEMENT_NAMES,
  SCHEMA_VERSION,
  TERMINAL_STATES,
  type FinishedAtSource,
  type PlacementName,
  type TaskCommand,
  type TaskLocation,
  type TaskOrigin,
  type TaskRecord,
  type TaskState,
} from "./store/record/record.ts";
export { parseRecord, type ParsedRecord, type RecordProblem } from "./store/record/parse-record.ts";
export { taskPaths, type TaskPaths } from "./store/layout.ts";
export { defaultStorageRoot } from "./store/storage/storage-root.ts";

// The wire protocol (JSON-RPC 2.0, one object a line), its published schema, and a session over it.
export { METHODS, type MethodName, NOTIFICATIONS, PROTOCOL_VERSIONS, RPC_ERRORS, RpcError } from "./rpc/protocol.ts";
export { RPC_SCHEMA_ID, rpcSchemaPath } from "./rpc/schema/mod.ts";
export { controlSocketPath } from "./rpc/socket-path.ts";
export { askHolder, connectHolder, type HolderConnection, NO_HOLDER } from "./control/socket-client.ts";
export { openSession, type Session, type SessionOptions } from "./session/session.ts";

// The census: what runs under a process, and whether an idle agent may be retired (field notes §2).
export { takeCensus, type CensusOptions } from "./census/take-census.ts";
export { takeSnapshot, type CensusProcess, type ProcessSnapshot, type ProcessSnapshotOptions } from "./census/scan/snapshot.ts";
export {
  underLeader,
  type CensusMember,
  type CensusResult,
  type CensusSources,
  type LeaderCensus,
  type LeaderIdentity,
  type MemberReason,
  type UnderLeaderOptions,
} from "./census/decide/under-leader.ts";
export { decideIdle, mayRetireIdle, type BlockingProcess, type IdleDecision, type MayRetireOptions } from "./census/decide/decision.ts";
export {
  readLaunchRecord,
  type AgentKind,
  type AgentKindField,
  type LaunchInputs,
  type LaunchRecord,
  type LaunchRecordOptions,
  type LaunchServer,
} from "./census/agent-config/launch-record.ts";
export type { ServerSpec } from "./census/agent-config/server-spec.ts";
export { logRefusal, type RefusalLogOptions, type RefusalLogResult } from "./census/refusal-log.ts";
export type { CensusError, CensusErrorCode } from "./census/census-error.ts";
/** A live process's identity (pid, start time, cgroup), as the census takes a leader. */
export { inspectPid, type LiveProcess, type ProcessIdentity } from "./proc/identity.ts";

// Agents (Claude Code, Codex, an ACP agent) run as tasks, with their launch record, retired when idle.
export { launchAgent, type AgentSpec, type LaunchedAgent } from "./agent/launch-agent.ts";
export { mayRetireAgent, retireIdleAgent, type AgentIdleDecision, type AgentRetireOptions } from "./agent/retire-agent.ts";
export { launchRecordPath, readLaunchRecordFile, writeLaunchRecordFile, type StoredLaunchRecord } from "./agent/record-file.ts";
export { agentLeader, type AgentLeader } from "./agent/agent-leader.ts";
/** The old names (`launchHarness`, `retireIdleHarness`, …), deprecated: removed in the next minor release. */
export {
  harnessLeader,
  launchHarness,
  mayRetireHarness,
  retireIdleHarness,
  type HarnessIdleDecision,
  type HarnessLeader,
  type HarnessRetireOptions,
  type HarnessSpec,
  type LaunchedHarness,
} from "./agent/deprecated.ts";

// A keyed process table with generations: a re-spawned process never inherits its killed predecessor's
// output or exit (field notes §3).
export {
  childProcessSource,
  GenerationError,
  GenerationTable,
  isCurrentGeneration,
  type AdoptResult,
  type ChildProcessSourceOptions,
  type ChildProcessSpec,
  type ExitEvent,
  type GenerationErrorCode,
  type GenerationErrorEvent,
  type GenerationEvents,
  type GenerationInfo,
  type GenerationKillResult,
  type GenerationRef,
  type GenerationTableOptions,
  type KeyState,
  type KillSignal,
  type OutputEvent,
  type ProcessHandle,
  type ProcessSink,
  type ProcessSource,
  type RetiredEvent,
  type SpawnResult,
  type SupersededEvent,
} from "./generation/mod.ts";
