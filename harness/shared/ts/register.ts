/**
 * Makes `.ts` files importable on Node (see hooks.ts). Idempotent; does
 * nothing under Deno. Used as `node --import …/register.js` for the driver
 * in the container, and called before the runner imports a user's file.
 */
import * as nodeModule from "node:module";
import { nodeStripsTypes } from "./strip-types.ts";

/** What strips types for a Node that cannot (hooks.ts): a dependency of outlive's own, so nothing for the user to install. */
export const STRIPPER_PACKAGE = "esbuild";

/**
 * A `.ts` file cannot be loaded because a package it needs is not installed.
 * The message names the package and how to install it; a command that meets
 * it exits 69 (EX_UNAVAILABLE of sysexits.h: "a support program does not
 * exist"), a code no other failure uses.
 */
export class MissingDependencyError extends Error {
  readonly code = "E_MISSING_DEPENDENCY";
  readonly exitCode = 69;
  constructor(readonly dependency: string, message: string) {
    super(message);
  }
}

let registered = false;

/**
 * Why `.ts` files cannot be imported in this process, or null when they can:
 * Deno, a Node that strips types itself, or an older Node where outlive's
 * own esbuild can be imported (an install that left out its platform's
 * binary package, `--omit=optional`, cannot).
 */
export function typeScriptProblem(): MissingDependencyError | string | null {
  if ("Deno" in globalThis) return null;
  // deno-lint-ignore no-explicit-any
  if (typeof (nodeModule as any).register !== "function") return `this Node (${process.version}) cannot load module hooks; use Node >= 20.6 or Deno`;
  if (nodeStripsTypes()) return null;
  try {
    import.meta.resolve(STRIPPER_PACKAGE);
    return null;
  } catch {
    return new MissingDependencyError(STRIPPER_PACKAGE,
      `this Node (${process.version}) does not strip TypeScript types itself, and outlive's dependency "${STRIPPER_PACKAGE}" cannot be found: ` +
      `reinstall outlive with its dependencies (npm install, without --omit=optional), or run on Node >= 23.6 (22.6+ with --experimental-strip-types), or write the scenario in .js`);
  }
}

/** True when `.ts` files can now be imported in this process (see typeScriptProblem for why not). */
export function registerTypeScript(): boolean {
  if ("Deno" in globalThis) return true;
  if (registered) return true;
  if (typeScriptProblem() !== null) return false;
  // deno-lint-ignore no-explicit-any
  const register = (nodeModule as any).register as (specifier: string, parent: string) => void;
  const hooks = import.meta.url.endsWith(".ts") ? "./hooks.ts" : "./hooks.js";
  register(hooks, import.meta.url);
  registered = true;
  return true;
}

registerTypeScript();
