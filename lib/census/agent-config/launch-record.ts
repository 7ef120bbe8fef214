import { resolve } from "node:path";
import { censusError, describeThrown, type CensusError } from "../census-error.ts";
import { readClaudeServers, type ConfigContext } from "./claude-config.ts";
import { readCodexServers } from "./codex-config.ts";
import { DEFAULT_MAX_CONFIG_BYTES } from "./config-file.ts";
import { programForms } from "../recognise/program-path.ts";
import { checkServerSpec, DEFAULT_INTERPRETERS, type ServerSpec } from "./server-spec.ts";
import { mergeSources, type SourceServers } from "./server-table.ts";

/** A configured server, with every argv[0] form it may take in the harness's child. */
export interface LaunchServer extends ServerSpec {
  programs: readonly string[];
}

/**
 * The MCP servers a harness's configs named when it started. Plain data:
 * store it with the session, so a later edit of a config changes nothing.
 */
export interface LaunchRecord {
  /** False when the configs could not be read in time: then no process can be shown to be a server. */
  known: boolean;
  servers: LaunchServer[];
  /** Sources that added nothing (missing, unparsable, too large, …) and servers left out, with why. */
  notes: CensusError[];
  /** ISO time the configs were read. */
  readAt: string;
}

/** Which agent's config files name its MCP servers: Claude Code's, Codex's, or none (`other`: ACP servers only). */
export type AgentKind = "claude-code" | "codex" | "other";

/**
 * The agent kind, as `agent`, or for one release under its old name
 * `harness` (never both).
 */
export type AgentKindField =
  | {
    /** Whose config files to read: Claude Code's, Codex's, or none (ACP servers only). */
    agent: AgentKind;
    harness?: never;
  }
  | {
    /** @deprecated Use `agent` (the same values); `harness` is removed in the next release. */
    harness: AgentKind;
    agent?: never;
  };

/**
 * The agent kind a caller gave, under either name.
 *
 * @example
 * ```ts
 * import { agentKindOf } from "./launch-record.ts";
 * console.log(agentKindOf({ agent: "codex" }), agentKindOf({ harness: "other" })); // "codex" "other"
 * ```
 */
export function agentKindOf(field: AgentKindField): AgentKind {
  return field.agent ?? field.harness;
}

/** What the caller is about to spawn. */
export type LaunchInputs = AgentKindField & {
  /** The agent's argv (for Claude Code's `--mcp-config` and `--strict-mcp-config`). */
  argv?: readonly string[];
  /** The folder the agent will run in. */
  cwd: string;
  /** The agent's environment: PATH, HOME, CLAUDE_CONFIG_DIR, CODEX_HOME. */
  env: Readonly<Record<string, string | undefined>>;
  /** Servers given to the agent at session start (ACP `session/new` `mcpServers`: `{ name, command, args }`). */
  servers?: readonly unknown[];
};

export interface LaunchRecordOptions {
  /** Milliseconds the whole read may take; past it the record is unknown. Default 3 000. */
  timeoutMs?: number;
  /** Config files larger than this add nothing. Default 16 MiB. */
  maxConfigBytes?: number;
  /** Interpreters whose bare use never names a server. Default `DEFAULT_INTERPRETERS`. */
  interpreters?: readonly string[];
  /** Abandons the read (the record is then unknown). */
  signal?: AbortSignal;
}

/**
 * Reads the launch record just before a harness is spawned. Never throws;
 * bounded in time; every source that adds nothing is named in `notes`.
 *
 * @example
 * ```ts
 * import { readLaunchRecord } from "./launch-record.ts";
 * const record = await readLaunchRecord({
 *   agent: "other", cwd: "/", env: { PATH: "/usr/bin:/bin" },
 *   servers: [{ name: "echo", command: "sh", args: ["/srv/echo.sh"] }],
 * });
 * console.log(record.known, record.servers[0].programs); // true ["sh", "/usr/bin/sh"] (or "/bin/sh")
 * ```
 */
export async function readLaunchRecord(inputs: LaunchInputs, options: LaunchRecordOptions = {}): Promise<LaunchRecord> {
  const timeoutMs = options.timeoutMs ?? 3_000;
  const readAt = new Date().toISOString();
  const controller = new AbortController();
  let why = `the MCP configs could not be read within ${timeoutMs} ms (option timeoutMs)`;
  const onOuterAbort = () => {
    why = "the caller abandoned reading the MCP configs";
    controller.abort();
  };
  if (options.signal?.aborted) onOuterAbort();
  else options.signal?.addEventListener("abort", onOuterAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const cutOff = new Promise<"cut-off">((done) => {
    if (controller.signal.aborted) return done("cut-off");
    controller.signal.addEventListener("abort", () => done("cut-off"), { once: true });
    timer = setTimeout(() => controller.abort(), timeoutMs);
  });
  try {
    const outcome = await Promise.race([collect(inputs, options, controller.signal), cutOff]);
    if (outcome === "cut-off" || controller.signal.aborted) {
      const note = censusError("launch-record-unknown", `${why}; no process can be shown to be a server`);
      return { known: false, servers: [], notes: [note], readAt };
    }
    return { known: true, servers: outcome.servers, notes: outcome.notes, readAt };
  } catch (error) {
    const note = censusError("launch-record-unknown", `reading the MCP configs failed: ${describeThrown(error)}`);
    return { known: false, servers: [], notes: [note], readAt };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onOuterAbort);
  }
}

async function collect(inputs: LaunchInputs, options: LaunchRecordOptions, signal: AbortSignal): Promise<{ servers: LaunchServer[]; notes: CensusError[] }> {
  const interpreters = options.interpreters ?? DEFAULT_INTERPRETERS;
  const cwd = resolve(inputs.cwd);
  const ctx: ConfigContext = { cwd, env: inputs.env, maxBytes: options.maxConfigBytes ?? DEFAULT_MAX_CONFIG_BYTES, signal, interpreters };
  const parts: SourceServers[] = [];
  const agent = agentKindOf(inputs);
  if (agent === "claude-code") parts.push(await readClaudeServers(inputs.argv ?? [], ctx));
  if (agent === "codex") parts.push(await readCodexServers(ctx));
  if (inputs.servers !== undefined) parts.push(acpServers(inputs.servers, interpreters));
  const { servers, notes } = mergeSources(parts);
  const withForms: LaunchServer[] = [];
  for (const spec of servers) {
    withForms.push({ ...spec, programs: await programForms(spec.command, cwd, inputs.env.PATH, signal) });
  }
  return { servers: withForms, notes };
}

function acpServers(list: readonly unknown[], interpreters: readonly string[]): SourceServers {
  if (!Array.isArray(list)) {
    return { servers: [], notes: [censusError("config-wrong-type", "the session's mcpServers is not a list; it adds nothing")] };
  }
  const parts = list.map((raw, i) => {
    const name = typeof (raw as { name?: unknown })?.name === "string" ? (raw as { name: string }).name : `#${i + 1}`;
    const checked = checkServerSpec(name, "the ACP session", raw, interpreters);
    return checked.ok ? { servers: [checked.spec], notes: [] } : { servers: [], notes: [checked.error] };
  });
  return mergeSources(parts);
}
