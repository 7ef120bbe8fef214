import { join } from "node:path";
import { parse } from "smol-toml";
import { censusError } from "../census-error.ts";
import { readConfigText } from "./config-file.ts";
import type { ConfigContext } from "./claude-config.ts";
import { isTable, serversFromTable, type SourceServers } from "./server-table.ts";

/**
 * `config.toml` in `$CODEX_HOME`, else in `$HOME/.codex`; null when neither is set.
 *
 * @example
 * ```ts
 * import { codexConfigPath } from "./codex-config.ts";
 * console.log(codexConfigPath({ HOME: "/home/ada" })); // "/home/ada/.codex/config.toml"
 * console.log(codexConfigPath({ HOME: "/home/ada", CODEX_HOME: "/srv/codex" })); // "/srv/codex/config.toml"
 * ```
 */
export function codexConfigPath(env: Readonly<Record<string, string | undefined>>): string | null {
  if (env.CODEX_HOME) return join(env.CODEX_HOME, "config.toml");
  return env.HOME ? join(env.HOME, ".codex", "config.toml") : null;
}

/**
 * The `[mcp_servers]` table of a Codex `config.toml` text.
 *
 * @example
 * ```ts
 * import { serversFromCodexToml } from "./codex-config.ts";
 * const r = serversFromCodexToml('[mcp_servers.docs]\ncommand = "docs-mcp"\nargs = ["--stdio"]\n', "config.toml");
 * console.log(r.servers[0].command, r.servers[0].args); // "docs-mcp" ["--stdio"]
 * ```
 */
export function serversFromCodexToml(text: string, source: string, interpreters?: readonly string[]): SourceServers {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (error) {
    const first = String((error as Error).message).split("\n")[0];
    return { servers: [], notes: [censusError("config-unparsable", `${source} is not TOML (${first}); it adds nothing`)] };
  }
  if (!isTable(doc)) return { servers: [], notes: [] };
  return serversFromTable(doc.mcp_servers, `${source} [mcp_servers]`, interpreters);
}

/** The servers Codex would start, from its `config.toml`. */
export async function readCodexServers(ctx: ConfigContext): Promise<SourceServers> {
  const path = codexConfigPath(ctx.env);
  if (path === null) {
    return { servers: [], notes: [censusError("config-missing", "neither CODEX_HOME nor HOME is set, so there is no Codex config.toml to read")] };
  }
  const read = await readConfigText(path, { maxBytes: ctx.maxBytes, signal: ctx.signal });
  if (!read.ok) return { servers: [], notes: [read.error] };
  return serversFromCodexToml(read.text, path, ctx.interpreters);
}
