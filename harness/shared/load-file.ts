import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Scenario } from "./define.ts";
import { MissingDependencyError, registerTypeScript, typeScriptProblem } from "./ts/register.ts";

/** A scenario file that cannot be used; the message is one line naming the file and the cause. */
export class ScenarioFileError extends Error {
  readonly code = "E_SCENARIO_FILE";
  constructor(readonly file: string, cause: string) {
    super(`${file}: ${cause}`);
  }
}

/** How long an import may take before the file is reported as never finishing it (a top-level await that hangs). */
export const DEFAULT_IMPORT_TIMEOUT_MS = 20_000;

const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/**
 * Imports a scenario file from any path (`.ts` on Node through the
 * TypeScript hooks, natively on Deno; `.js`/`.mjs` as they are) and
 * returns its scenarios: the default export (one scenario, or an array of
 * them) or a named `scenarios` array. Every way it can fail is a
 * ScenarioFileError with one line, but a `.ts` file on a Node that needs
 * the compiler when it is not installed: a MissingDependencyError naming it.
 */
export async function loadScenarioFile(file: string, timeoutMs = DEFAULT_IMPORT_TIMEOUT_MS): Promise<Scenario[]> {
  const path = resolve(file);
  if (!existsSync(path)) throw new ScenarioFileError(file, "no such file");
  if (!statSync(path).isFile()) throw new ScenarioFileError(file, "not a file");
  if (/\.(ts|mts|cts)$/.test(path) && !registerTypeScript()) {
    const problem = typeScriptProblem();
    if (problem instanceof MissingDependencyError) throw problem;
    throw new ScenarioFileError(file, problem ?? "TypeScript files cannot be loaded here");
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  let mod: Record<string, unknown>;
  try {
    mod = await Promise.race([
      import(pathToFileURL(path).href) as Promise<Record<string, unknown>>,
      new Promise<never>((_, reject) => {
        // Kept referenced: an import stuck on a promise holds no handle, and the process would just end, saying nothing.
        timer = setTimeout(() => reject(new Error(`its import did not finish within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (error) {
    const message = (error as Error).message?.split("\n")[0] ?? String(error);
    throw new ScenarioFileError(file, /did not finish within/.test(message) ? message : `threw at import: ${message}`);
  } finally {
    clearTimeout(timer);
  }
  const found = mod.default ?? mod.scenarios;
  const list = Array.isArray(found) ? found : found === undefined ? [] : [found];
  if (list.length === 0) throw new ScenarioFileError(file, "exports no scenario (expected `export default defineScenario({ … })`)");
  list.forEach((s, i) => {
    const bad = shapeProblem(s);
    if (bad) throw new ScenarioFileError(file, `export ${Array.isArray(found) ? `[${i}] ` : ""}is not a scenario: ${bad}`);
  });
  const names = list.map((s) => (s as Scenario).name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) throw new ScenarioFileError(file, `two scenarios are named ${JSON.stringify(dup)}`);
  return list as Scenario[];
}

function shapeProblem(s: unknown): string | null {
  if (typeof s !== "object" || s === null) return `expected an object from defineScenario, got ${s === null ? "null" : typeof s}`;
  const o = s as Record<string, unknown>;
  if (typeof o.name !== "string" || !NAME.test(o.name)) return `expected \`name\` to be lower-case letters, digits, dots and dashes, got ${JSON.stringify(o.name)}`;
  if (typeof o.inside !== "function") return `expected \`inside\` to be a function, got ${typeof o.inside}`;
  if (o.timeoutMs !== undefined && (typeof o.timeoutMs !== "number" || !(o.timeoutMs > 0))) return `expected \`timeoutMs\` to be a positive number, got ${JSON.stringify(o.timeoutMs)}`;
  if (o.bug !== undefined && (typeof o.bug !== "string" || o.bug.trim() === "")) return `expected \`bug\` to be a non-empty string, got ${JSON.stringify(o.bug)}`;
  if (o.runtime !== undefined && o.runtime !== "node" && o.runtime !== "deno") return `expected \`runtime\` to be "node" or "deno", got ${JSON.stringify(o.runtime)}`;
  return null;
}
