import { agentKindOf, readLaunchRecord, type AgentKindField, type LaunchRecord, type LaunchRecordOptions } from "../census/agent-config/launch-record.ts";
import { describeValue, OutliveError } from "../errors.ts";
import type { RunSpec } from "../supervisor/options.ts";
import type { Supervisor } from "../supervisor/supervisor.ts";
import type { TaskRecord } from "../store/record/record.ts";
import { writeLaunchRecordFile } from "./record-file.ts";

/**
 * An agent (an agent harness: Claude Code, Codex, an ACP agent) to run as
 * an outlive task. `agent` says whose configs name its MCP servers: Claude
 * Code's, Codex's, or none (`other`, e.g. an ACP agent).
 */
export type AgentSpec = Omit<RunSpec, "shell" | "argv"> & AgentKindField & {
  /** The agent's argv (Claude Code's `--mcp-config` is read from it). */
  argv: string[];
  /** Servers handed to it at session start (ACP `session/new` `mcpServers`). */
  servers?: readonly unknown[];
};

export interface LaunchedAgent {
  task: TaskRecord;
  launchRecord: LaunchRecord;
}

const AGENT_KINDS = ["claude-code", "codex", "other"];

/**
 * Runs an agent as an outlive task and keeps, in the task's directory, its
 * launch record: the MCP servers its configs named just before the spawn.
 * A supervisor adopting the task after a restart reads the same record
 * back, so the agent is judged by the servers it started with, not by
 * whatever the configs say later (nor kept up by any server). The record is
 * written once the task runs; if this process dies in that moment the task
 * has none and is judged as adopted without one (kept by anything that runs
 * under it).
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { Supervisor } from "../supervisor/supervisor.ts";
 * import { launchAgent } from "./launch-agent.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-launch-"));
 * const sup = await Supervisor.open({ storage, log: () => {} });
 * const { task, launchRecord } = await launchAgent(sup, { agent: "other", argv: ["sleep", "30"], servers: [] });
 * console.log(task.state, launchRecord.known); // "running" true
 * await sup.kill(task.id);
 * await sup.close();
 * rmSync(storage, { recursive: true });
 * ```
 */
export async function launchAgent(sup: Supervisor, spec: AgentSpec, options: LaunchRecordOptions = {}): Promise<LaunchedAgent> {
  if (typeof spec !== "object" || spec === null) throw new OutliveError("E_BAD_OPTION", `Expected the agent spec to be an object, got ${describeValue(spec)}`);
  if (spec.agent !== undefined && spec.harness !== undefined) {
    throw new OutliveError("E_BAD_OPTION", "Expected one of the `agent` option and its deprecated name `harness`, got both");
  }
  // A caller still on the old name hears of it by the old name.
  const option = spec.harness !== undefined ? "harness" : "agent";
  const agent = agentKindOf(spec);
  if (!AGENT_KINDS.includes(agent)) {
    throw new OutliveError("E_BAD_OPTION", `Expected the \`${option}\` option to be one of ${AGENT_KINDS.join(", ")}, got ${describeValue(agent)}`);
  }
  const { agent: _agent, harness: _harness, servers, ...run } = spec;
  const cwd = run.cwd ?? process.cwd();
  // The task's environment is this process's with the spec's on top; the configs are looked up in that one.
  const env = { ...process.env, ...(run.env ?? {}) };
  const launchRecord = await readLaunchRecord({ agent, argv: run.argv, cwd, env, servers }, options);
  const task = await sup.run(run);
  await writeLaunchRecordFile(sup.store.root, task.id, launchRecord);
  return { task, launchRecord };
}
