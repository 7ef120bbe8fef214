import { censusError, type CensusError } from "../census-error.ts";
import { isInterpreter } from "../recognise/interpreter-name.ts";

export { baseName } from "../recognise/interpreter-name.ts";

/** A configured stdio server whose command and args can be matched exactly. */
export interface ServerSpec {
  name: string;
  /** Where it was configured, e.g. `.mcp.json` or `--mcp-config inline #1`. */
  source: string;
  command: string;
  args: readonly string[];
}

/**
 * The interpreters that may run a server's program as a script.
 *
 * @example
 * ```ts
 * import { DEFAULT_INTERPRETERS } from "./server-spec.ts";
 * console.log(DEFAULT_INTERPRETERS.includes("python"), DEFAULT_INTERPRETERS.includes("curl")); // true false
 * ```
 */
export const DEFAULT_INTERPRETERS: readonly string[] = ["node", "bun", "deno", "python", "ruby", "perl", "sh", "bash", "zsh", "dash"];

export type SpecCheck =
  | { ok: true; spec: ServerSpec }
  /** Not a process the harness starts (remote, disabled) or not matchable (invalid). */
  | { ok: false; error: CensusError };

const HOLDS_WHITESPACE = /\s/;


function part(value: unknown): string | null {
  return typeof value === "string" && value !== "" && !HOLDS_WHITESPACE.test(value) ? value : null;
}

/**
 * Checks one configured server entry (any JSON/TOML value). Only a server
 * whose command and every arg are non-empty strings without whitespace can
 * ever be matched, and a bare interpreter (`node` with no args) never can:
 * it would vouch for any script at all.
 *
 * @example
 * ```ts
 * import { checkServerSpec } from "./server-spec.ts";
 * console.log(checkServerSpec("fs", ".mcp.json", { command: "npx", args: ["-y", "srv"] }).ok); // true
 * console.log(checkServerSpec("x", ".mcp.json", { command: "node" }).ok); // false
 * ```
 */
export function checkServerSpec(
  name: string,
  source: string,
  raw: unknown,
  interpreters: readonly string[] = DEFAULT_INTERPRETERS,
): SpecCheck {
  const label = `server "${name}" in ${source}`;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { ok: false, error: censusError("server-invalid", `${label} is ${describe(raw)}, not an object; it is ignored`) };
  }
  const entry = raw as Record<string, unknown>;
  if (entry.enabled === false || entry.disabled === true) {
    return { ok: false, error: censusError("server-disabled", `${label} is disabled; the harness starts no process for it`) };
  }
  const type = entry.type;
  if (entry.command === undefined && (entry.url !== undefined || (typeof type === "string" && type !== "stdio"))) {
    return { ok: false, error: censusError("server-remote", `${label} is reached over the network; the harness starts no process for it`) };
  }
  const command = part(entry.command);
  if (command === null) {
    return {
      ok: false,
      error: censusError("server-invalid", `${label} has command ${describe(entry.command)}; it must be a non-empty string without spaces to be recognised`),
    };
  }
  const rawArgs = entry.args === undefined ? [] : entry.args;
  if (!Array.isArray(rawArgs)) {
    return { ok: false, error: censusError("server-invalid", `${label} has args ${describe(rawArgs)}; it must be a list of strings`) };
  }
  const args: string[] = [];
  for (const [i, value] of rawArgs.entries()) {
    const arg = part(value);
    if (arg === null) {
      return {
        ok: false,
        error: censusError("server-invalid", `${label} has args[${i}] = ${describe(value)}; each arg must be a non-empty string without spaces to be recognised`),
      };
    }
    args.push(arg);
  }
  if (args.length === 0 && isInterpreter(command, interpreters)) {
    return { ok: false, error: censusError("server-invalid", `${label} is the bare interpreter "${command}" with no script; it is never recognised`) };
  }
  return { ok: true, spec: { name, source, command, args } };
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === "object") return "an object";
  return `${typeof value} ${String(value)}`;
}
