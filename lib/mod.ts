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
export { Supervisor, type DrainReason, type KillResult, type ReplayReport } from "./supervisor/supervisor.ts";
export type { RunSpec, SupervisorMode, SupervisorOptions } from "./supervisor/options.ts";
export { TASK_STEPS, type StepListener, type TaskStep } from "./start/task-steps.ts";
export { OutliveError, type OutliveErrorCode } from "./errors.ts";
export { checkOutputOptions, type OutputChunk, type OutputOptions, type OutputStream } from "./output/request.ts";
export * from "./store/mod.ts";
export * from "./placement/mod.ts";
export { killLadder, type KillHow, type KillLadderOptions, type KillTarget } from "./kill/kill-ladder.ts";
export { decideReplay, exitWords, type PidEvidence, type ReplayDecision, type ReplayEvidence, type SpawnerCgroupEvidence } from "./replay/decide.ts";
export { replayAll, type ReplayItem } from "./replay/replay-all.ts";
export { spawnerCgroupEvidence } from "./replay/spawner-cgroup.ts";
export { defaultShellPath, shellPathProblem } from "./spawn/shell-path.ts";
export * from "./proc/mod.ts";
export * from "./census/mod.ts";
export * from "./agent/mod.ts";
export * from "./generation/mod.ts";
export * from "./pty/mod.ts";
export * from "./retention/mod.ts";
export { controlSocketPath, METHODS, type MethodName, PROTOCOL_VERSIONS, RPC_ERRORS, RPC_SCHEMA_ID, RpcError, rpcSchemaPath } from "./rpc/mod.ts";
export { askHolder, connectHolder, type HolderConnection, holderAnswers, NO_HOLDER } from "./control/mod.ts";
export { openSession, type Session, type SessionOptions } from "./session/mod.ts";
export * from "./spawner/mod.ts";
