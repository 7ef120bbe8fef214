/**
 * Agents (agent harnesses such as Claude Code, Codex, an ACP agent)
 * launched through outlive: run one as a task with its launch record kept
 * in the task's directory, and retire it when idle (its whole unit or
 * cgroup, escapees included).
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { Supervisor } from "../supervisor/supervisor.ts";
 * import { launchAgent, retireIdleAgent } from "./mod.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-launch-"));
 * const sup = await Supervisor.open({ storage, log: () => {} });
 * const { task } = await launchAgent(sup, { agent: "other", argv: ["sleep", "30"], servers: [] });
 * await new Promise((r) => setTimeout(r, 300));
 * console.log((await retireIdleAgent(sup, task.id)).killed?.record.state); // "killed": nothing ran under it
 * await sup.close();
 * rmSync(storage, { recursive: true });
 * ```
 *
 * @module
 */
export { launchAgent, type AgentSpec, type LaunchedAgent } from "./launch-agent.ts";
export { mayRetireAgent, retireIdleAgent, type AgentIdleDecision, type AgentRetireOptions } from "./retire-agent.ts";
export { launchRecordPath, readLaunchRecordFile, writeLaunchRecordFile, type StoredLaunchRecord } from "./record-file.ts";
export { agentLeader, type AgentLeader } from "./agent-leader.ts";
/** The old names (`launchHarness`, `retireIdleHarness`, …), deprecated: removed in the next release. */
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
} from "./deprecated.ts";
