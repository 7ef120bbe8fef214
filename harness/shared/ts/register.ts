/**
 * Makes `.ts` files importable on Node (see hooks.ts). Idempotent; does
 * nothing under Deno. Used as `node --import …/register.js` for the driver
 * in the container, and called before the runner imports a user's file.
 */
import * as nodeModule from "node:module";

let registered = false;

/** True when `.ts` files can now be imported in this process. */
export function registerTypeScript(): boolean {
  if ("Deno" in globalThis) return true;
  if (registered) return true;
  // deno-lint-ignore no-explicit-any
  const register = (nodeModule as any).register as undefined | ((specifier: string, parent: string) => void);
  if (typeof register !== "function") return false;
  const hooks = import.meta.url.endsWith(".ts") ? "./hooks.ts" : "./hooks.js";
  register(hooks, import.meta.url);
  registered = true;
  return true;
}

registerTypeScript();
