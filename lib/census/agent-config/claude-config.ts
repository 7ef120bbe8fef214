import { isAbsolute, join, resolve } from "node:path";
import { censusError } from "../census-error.ts";
import { readConfigText } from "./config-file.ts";
import { isTable, mergeSources, parseJsonSource, serversFromTable, type SourceServers } from "./server-table.ts";

/** What Claude Code's argv says about MCP configs. */
export interface ClaudeArgvConfigs {
  /** Each `--mcp-config` value: a file path or inline JSON. */
  configs: string[];
  /** `--strict-mcp-config`: only the `--mcp-config` servers are used. */
  strict: boolean;
}

/**
 * Picks `--mcp-config` values and `--strict-mcp-config` out of a Claude Code
 * argv. The option is variadic (`--mcp-config a.json b.json`), so values
 * run until the next argument that starts with `-`; `--` ends options.
 *
 * @example
 * ```ts
 * import { claudeArgvConfigs } from "./claude-config.ts";
 * console.log(claudeArgvConfigs(["claude", "--mcp-config", "a.json", "{}", "-p", "hi"]));
 * // { configs: ["a.json", "{}"], strict: false }
 * ```
 */
export function claudeArgvConfigs(argv: readonly string[]): ClaudeArgvConfigs {
  const configs: string[] = [];
  let strict = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") break;
    if (arg === "--strict-mcp-config") strict = true;
    else if (arg.startsWith("--mcp-config=")) configs.push(arg.slice("--mcp-config=".length));
    else if (arg === "--mcp-config") {
      while (i + 1 < argv.length && !argv[i + 1].startsWith("-")) configs.push(argv[++i]);
    }
  }
  return { configs, strict };
}

/** Where the harness runs and what it sees, as far as config lookup cares. */
export interface ConfigContext {
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  maxBytes: number;
  signal?: AbortSignal;
  interpreters?: readonly string[];
}

/**
 * The servers Claude Code would start: `--mcp-config` files and inline
 * JSON; unless strict, the user and project tables of `.claude.json` and
 * the folder's `.mcp.json`.
 */
export async function readClaudeServers(argv: readonly string[], ctx: ConfigContext): Promise<SourceServers> {
  const { configs, strict } = claudeArgvConfigs(argv);
  const parts: SourceServers[] = [];
  let inline = 0;
  for (const value of configs) {
    if (value.trimStart().startsWith("{")) {
      parts.push(fromMcpJson(value, `--mcp-config inline #${++inline}`, ctx));
    } else {
      const path = isAbsolute(value) ? value : resolve(ctx.cwd, value);
      parts.push(await fromMcpJsonFile(path, `--mcp-config ${path}`, ctx));
    }
  }
  if (!strict) {
    parts.push(await fromClaudeJson(ctx));
    parts.push(await fromMcpJsonFile(join(ctx.cwd, ".mcp.json"), join(ctx.cwd, ".mcp.json"), ctx));
  }
  return mergeSources(parts);
}

function fromMcpJson(text: string, source: string, ctx: ConfigContext): SourceServers {
  const parsed = parseJsonSource(text, source);
  if (!parsed.ok) return { servers: [], notes: [parsed.note] };
  if (!isTable(parsed.value)) {
    return { servers: [], notes: [censusError("config-wrong-type", `${source} is not a JSON object; it adds nothing`)] };
  }
  return serversFromTable(parsed.value.mcpServers, `${source} mcpServers`, ctx.interpreters);
}

async function fromMcpJsonFile(path: string, source: string, ctx: ConfigContext): Promise<SourceServers> {
  const read = await readConfigText(path, { maxBytes: ctx.maxBytes, signal: ctx.signal });
  if (!read.ok) return { servers: [], notes: [read.error] };
  return fromMcpJson(read.text, source, ctx);
}

/**
 * `.claude.json` in `$CLAUDE_CONFIG_DIR`, else in `$HOME`; null when neither is set.
 *
 * @example
 * ```ts
 * import { claudeJsonPath } from "./claude-config.ts";
 * console.log(claudeJsonPath({ HOME: "/home/ada" })); // "/home/ada/.claude.json"
 * console.log(claudeJsonPath({ HOME: "/home/ada", CLAUDE_CONFIG_DIR: "/etc/claude" })); // "/etc/claude/.claude.json"
 * console.log(claudeJsonPath({})); // null
 * ```
 */
export function claudeJsonPath(env: Readonly<Record<string, string | undefined>>): string | null {
  const dir = env.CLAUDE_CONFIG_DIR || env.HOME;
  return dir ? join(dir, ".claude.json") : null;
}

async function fromClaudeJson(ctx: ConfigContext): Promise<SourceServers> {
  const path = claudeJsonPath(ctx.env);
  if (path === null) {
    return { servers: [], notes: [censusError("config-missing", "neither CLAUDE_CONFIG_DIR nor HOME is set, so there is no .claude.json to read")] };
  }
  const read = await readConfigText(path, { maxBytes: ctx.maxBytes, signal: ctx.signal });
  if (!read.ok) return { servers: [], notes: [read.error] };
  const parsed = parseJsonSource(read.text, path);
  if (!parsed.ok) return { servers: [], notes: [parsed.note] };
  if (!isTable(parsed.value)) {
    return { servers: [], notes: [censusError("config-wrong-type", `${path} is not a JSON object; it adds nothing`)] };
  }
  const user = serversFromTable(parsed.value.mcpServers, `${path} mcpServers`, ctx.interpreters);
  const projects = parsed.value.projects;
  if (projects === undefined) return user;
  if (!isTable(projects)) {
    return mergeSources([user, { servers: [], notes: [censusError("config-wrong-type", `${path} projects is not an object; project servers add nothing`)] }]);
  }
  const cwd = resolve(ctx.cwd);
  // Own-property lookup: a folder named "__proto__" must not reach Object.prototype.
  const project = Object.hasOwn(projects, cwd) ? projects[cwd] : undefined;
  if (project === undefined) return user;
  if (!isTable(project)) {
    return mergeSources([user, { servers: [], notes: [censusError("config-wrong-type", `${path} projects["${cwd}"] is not an object; it adds nothing`)] }]);
  }
  return mergeSources([user, serversFromTable(project.mcpServers, `${path} projects["${cwd}"].mcpServers`, ctx.interpreters)]);
}
