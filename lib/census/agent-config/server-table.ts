import { censusError, type CensusError } from "../census-error.ts";
import { checkServerSpec, type ServerSpec } from "./server-spec.ts";

/** What one config source contributed: its servers, and notes on what it did not. */
export interface SourceServers {
  servers: ServerSpec[];
  notes: CensusError[];
}

/**
 * Reads a name → server table (`mcpServers` in JSON, `[mcp_servers]` in
 * TOML). A table of the wrong type adds nothing; each entry is checked on
 * its own, so one bad server does not hide the others.
 *
 * @example
 * ```ts
 * import { serversFromTable } from "./server-table.ts";
 * const r = serversFromTable({ a: { command: "srv" }, b: 7 }, ".mcp.json mcpServers");
 * console.log(r.servers.length, r.notes[0].code); // 1 "server-invalid"
 * ```
 */
export function serversFromTable(table: unknown, source: string, interpreters?: readonly string[]): SourceServers {
  if (table === undefined) return { servers: [], notes: [] };
  if (typeof table !== "object" || table === null || Array.isArray(table)) {
    return { servers: [], notes: [censusError("config-wrong-type", `${source} is not a table of servers; it adds nothing`)] };
  }
  const servers: ServerSpec[] = [];
  const notes: CensusError[] = [];
  for (const [name, raw] of Object.entries(table)) {
    const checked = checkServerSpec(name, source, raw, interpreters);
    if (checked.ok) servers.push(checked.spec);
    else notes.push(checked.error);
  }
  return { servers, notes };
}

/** Concatenates what several sources contributed. */
export function mergeSources(parts: readonly SourceServers[]): SourceServers {
  return { servers: parts.flatMap((p) => p.servers), notes: parts.flatMap((p) => p.notes) };
}

/** Parses JSON text into a value, or a note naming the source. */
export function parseJsonSource(text: string, source: string): { ok: true; value: unknown } | { ok: false; note: CensusError } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, note: censusError("config-unparsable", `${source} is not JSON (${(error as Error).message}); it adds nothing`) };
  }
}

/** True for a plain JSON/TOML object (not null, not a list). */
export function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
