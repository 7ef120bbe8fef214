/**
 * `outlive/internal`: the helpers outlive's own CLI, harness, benchmarks and
 * tests use, with NO promise: any of them may change or go in any release.
 * Build on lib/mod.ts (`outlive`) instead; if you need something from here,
 * open an issue saying what for, so it can become a promise on purpose.
 *
 * @module
 */
export * from "./mod.ts";
export * from "./store/mod.ts";
export * from "./placement/mod.ts";
export * from "./proc/mod.ts";
export * from "./census/mod.ts";
export * from "./pty/mod.ts";
export * from "./retention/mod.ts";
export * from "./spawner/mod.ts";
export { killLadder, type KillHow, type KillLadderOptions, type KillTarget } from "./kill/kill-ladder.ts";
export { decideReplay, exitWords, type PidEvidence, type ReplayDecision, type ReplayEvidence, type SpawnerCgroupEvidence } from "./replay/decide.ts";
export { replayAll, type ReplayItem } from "./replay/replay-all.ts";
export { spawnerCgroupEvidence } from "./replay/spawner-cgroup.ts";
export { defaultShellPath, shellPathProblem } from "./spawn/shell-path.ts";
export { readShimLine } from "./observe/shim-line.ts";
export { checkOutputOptions } from "./output/request.ts";
export { holderAnswers } from "./control/socket-client.ts";
export { portsOfTasks, portText, taskProcesses } from "./ports/task-ports.ts";
export { parseNetTable, readListeningSockets } from "./ports/proc-net.ts";
export { readEnvFile, type EnvFile } from "./start/env-file.ts";
export { specDigest } from "./start/spec-digest.ts";
export { restartDelays } from "./start/restart-policy.ts";
