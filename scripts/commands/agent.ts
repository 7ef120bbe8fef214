import { launchAgent, mayRetireAgent, retireIdleAgent, type AgentIdleDecision, type AgentKind } from "../../lib/mod.ts";
import { sayDeprecated } from "../cli/deprecation.ts";
import { help, parseFlags, seconds } from "../cli/flags.ts";
import { SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "../cli/supervisor-flags.ts";
import { withSupervisor } from "../cli/reach.ts";
import { UsageError } from "../cli/usage-error.ts";

export const AGENT_HELP = `usage: outlive agent run [--agent claude-code|codex|other] [--server JSON]… [--id ID] [--key KEY] [--timeout DURATION] -- CMD ARG…
       outlive agent retire ID [--dry-run]

An agent is an agent harness (Claude Code, Codex, an ACP agent) run as a task.
run     Starts an agent as a task and keeps its launch record (the MCP
        servers its configs name now) in the task's directory, so a later
        supervisor judges it by the same servers after a restart.
          --agent NAME     whose configs to read: claude-code (default; .mcp.json,
                           ~/.claude.json, --mcp-config in CMD), codex (config.toml),
                           or other (only --server)
          --server JSON    a server given at session start, {"name","command","args"}
                           (ACP session/new mcpServers; repeatable)
retire  Ends the task's agent if it is idle: nothing but its launch record's
        MCP servers runs under it (by parent chain, group, or in its cgroup).
        Its whole unit or cgroup is ended, escaped processes included.
          --dry-run        only say whether it may be retired
        Exit status: 0 retired (or, with --dry-run, may be), 3 kept (the reason
        is printed), 1 failure, 2 usage error.
${SUPERVISOR_FLAGS_HELP}

outlive harness and --harness, the old names of outlive agent and --agent, still work
and say so on stderr; they are removed in the next release.`;

/** `outlive agent run|retire …`. */
export async function agentCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === "run") return runAgent(rest);
  if (sub === "retire") return retireAgent(rest);
  if (sub === undefined || sub === "--help" || sub === "-h") return help(AGENT_HELP);
  throw new UsageError(`unknown agent command ${JSON.stringify(sub)}: expected run or retire`);
}

async function runAgent(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    ...SUPERVISOR_FLAGS,
    agent: { type: "string" },
    // --agent's old name, for one release.
    harness: { type: "string" },
    server: { type: "string", multiple: true },
    id: { type: "string" },
    key: { type: "string" },
    timeout: { type: "string" },
  } as const);
  if (values.help) return help(AGENT_HELP);
  if (positionals.length === 0) throw new UsageError("agent run needs a command: -- CMD ARG…");
  if (values.harness !== undefined) {
    if (values.agent !== undefined) throw new UsageError("--agent and --harness (its deprecated name): give one of them");
    sayDeprecated("outlive agent run", "--harness", "--agent");
  }
  const agent = (values.agent ?? values.harness ?? "claude-code") as AgentKind;
  const servers = ((values.server as unknown as string[] | undefined) ?? []).map((text) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new UsageError(`--server takes a JSON object {"name","command","args"}, got ${JSON.stringify(text)}`);
    }
  });
  const timeoutSeconds = values.timeout === undefined ? undefined : seconds("--timeout", values.timeout);
  const launched = await withSupervisor(supervisorOptions(values), (sup) =>
    launchAgent(sup, { agent, argv: positionals, servers: values.server ? servers : undefined, id: values.id, key: values.key, timeoutSeconds, cwd: process.cwd() }), { creates: true });
  if (values.json) console.log(JSON.stringify({ id: launched.task.id, pid: launched.task.pid, launchRecord: launched.launchRecord }));
  else {
    console.log(launched.task.id);
    const names = launched.launchRecord.servers.map((s) => s.name);
    console.error(`launch record: ${launched.launchRecord.known ? `${names.length} MCP server${names.length === 1 ? "" : "s"}${names.length ? ` (${names.join(", ")})` : ""}` : "unknown"}`);
    for (const note of launched.launchRecord.notes) console.error(`note: ${note.message} (${note.code})`);
  }
  return 0;
}

async function retireAgent(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { ...SUPERVISOR_FLAGS, "dry-run": { type: "boolean" } } as const);
  if (values.help) return help(AGENT_HELP);
  if (positionals.length !== 1) throw new UsageError(`agent retire takes exactly one task id, got ${positionals.length}`);
  const id = positionals[0];
  const result = await withSupervisor(supervisorOptions(values), async (sup) =>
    values["dry-run"] ? { ...(await mayRetireAgent(sup, id)), killed: null } : retireIdleAgent(sup, id));
  if (values.json) console.log(JSON.stringify({ ...result, killed: result.killed && { state: result.killed.record.state, how: result.killed.how } }));
  else console.log(describe(result, id, Boolean(values["dry-run"])));
  return result.decision.verdict === "retire" ? 0 : 3;
}

function describe(r: AgentIdleDecision & { killed: unknown }, id: string, dry: boolean): string {
  const d = r.decision;
  const record = r.launchRecordFound ? "its launch record" : "no launch record (judged as adopted without one)";
  const where = r.cgroup ? `, cgroup ${r.cgroup}` : "";
  if (d.verdict === "retire") return `${id}: ${dry ? "may be retired" : "retired"} (harness pid ${r.harnessPid}; only ${d.servers.length} MCP server${d.servers.length === 1 ? "" : "s"} of ${record} ran under it${where})`;
  if (d.blocking) return `${id}: kept: pid ${d.blocking.pid} runs ${d.blocking.argv.join(" ") || `[${d.blocking.name}]`} (${d.blocking.why}; ${record}${where})`;
  return `${id}: kept: ${d.reason.message} (${d.reason.code})`;
}
