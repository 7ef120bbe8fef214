import { censusError } from "../census/census-error.ts";
import { decideIdle, type IdleDecision } from "../census/decide/decision.ts";
import { DEFAULT_INTERPRETERS } from "../census/agent-config/server-spec.ts";
import { takeSnapshot } from "../census/scan/snapshot.ts";
import { takeCensus } from "../census/take-census.ts";
import type { KillResult, Supervisor } from "../supervisor/supervisor.ts";
import { agentLeader } from "./agent-leader.ts";
import { readLaunchRecordFile } from "./record-file.ts";

export interface AgentIdleDecision {
  decision: IdleDecision;
  /** The agent's pid (the wrapper's command), when it could be named. The name is the JSON field `outlive agent retire --json` prints. */
  harnessPid: number | null;
  /** False when the task has no usable launch record: it was then judged as adopted without one. */
  launchRecordFound: boolean;
  /** The cgroup whose members were counted, when one was. */
  cgroup: string | null;
}

export interface AgentRetireOptions {
  /** Interpreters that may run a server's program as a script. Default `DEFAULT_INTERPRETERS`. */
  interpreters?: readonly string[];
  /** The kill ladder's TERM-to-KILL grace. Default: the supervisor's. */
  graceMs?: number;
}

/**
 * May the idle agent of task `id` be ended now? The agent is the task's
 * command; what runs under it is counted by parent chain, group and
 * the task's own cgroup (so setsid + double-forked work keeps it up), and
 * judged against the launch record stored with the task.
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { Supervisor } from "../supervisor/supervisor.ts";
 * import { launchAgent } from "./launch-agent.ts";
 * import { mayRetireAgent } from "./retire-agent.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-retire-"));
 * const sup = await Supervisor.open({ storage, log: () => {} });
 * const { task } = await launchAgent(sup, { agent: "other", argv: ["sh", "-c", "sleep 30 & wait"], servers: [] });
 * await new Promise((r) => setTimeout(r, 300));
 * console.log((await mayRetireAgent(sup, task.id)).decision.verdict); // "keep": its sleep is real work
 * await sup.kill(task.id);
 * await sup.close();
 * rmSync(storage, { recursive: true });
 * ```
 */
export async function mayRetireAgent(sup: Supervisor, id: string, options: AgentRetireOptions = {}): Promise<AgentIdleDecision> {
  const task = sup.get(id);
  const none = { harnessPid: null, launchRecordFound: false, cgroup: null };
  if (task.state !== "running" || task.pid === null) {
    return { ...none, decision: { verdict: "keep", reason: censusError("leader-missing", `task ${id} is ${task.state}, not running`) } };
  }
  const stored = await readLaunchRecordFile(sup.store.root, id);
  const snapshot = await takeSnapshot();
  const named = agentLeader(snapshot, { pid: task.pid, startTime: task.startTime });
  if (!named.ok) return { ...none, launchRecordFound: stored.ok, decision: { verdict: "keep", reason: named.error } };
  const cgroup = task.location.cgroup ?? null;
  // The task's own cgroup is named outright: outlive made it for this task alone.
  const result = await takeCensus(named.leader, { snapshot, cgroup: cgroup ? { path: cgroup } : "none" });
  const decision = decideIdle(result, stored.ok ? stored.record : null, options.interpreters ?? DEFAULT_INTERPRETERS);
  const used = result.ok ? result.census.sources.cgroup : null;
  return { decision, harnessPid: named.leader.pid, launchRecordFound: stored.ok, cgroup: used };
}

/**
 * Ends task `id`'s agent when it may be retired: the kill ladder on its
 * group, then its whole unit or cgroup, so work that escaped the group ends
 * too. Keeps it (and says why) otherwise.
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { Supervisor } from "../supervisor/supervisor.ts";
 * import { launchAgent } from "./launch-agent.ts";
 * import { retireIdleAgent } from "./retire-agent.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-retire-"));
 * const sup = await Supervisor.open({ storage, log: () => {} });
 * const server = { name: "s", command: "sleep", args: ["31"] };
 * const { task } = await launchAgent(sup, { agent: "other", argv: ["sh", "-c", "sleep 31 & wait"], servers: [server] });
 * await new Promise((r) => setTimeout(r, 300));
 * const r = await retireIdleAgent(sup, task.id);
 * console.log(r.decision.verdict, r.killed?.record.state); // "retire" "killed": only its server ran under it
 * await sup.close();
 * rmSync(storage, { recursive: true });
 * ```
 */
export async function retireIdleAgent(
  sup: Supervisor,
  id: string,
  options: AgentRetireOptions = {},
): Promise<AgentIdleDecision & { killed: KillResult | null }> {
  const judged = await mayRetireAgent(sup, id, options);
  if (judged.decision.verdict !== "retire") return { ...judged, killed: null };
  const killed = await sup.kill(id, { graceMs: options.graceMs, reason: "idle harness retired: only its MCP servers ran under it" });
  return { ...judged, killed };
}
