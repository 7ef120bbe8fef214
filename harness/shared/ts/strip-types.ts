/**
 * Whether this Node strips TypeScript types itself, so `.ts` files import
 * with no compiler: `process.features.typescript` is "strip" or "transform"
 * on Node >= 23.6, and on 22.10+ started with `--experimental-strip-types`;
 * Node 22.6–22.9 has the flag but not the feature field, so the flag itself
 * (on the command line or in NODE_OPTIONS) is looked for too.
 *
 * @example
 * ```ts
 * import { nodeStripsTypes } from "./strip-types.ts";
 * console.log(nodeStripsTypes()); // false on Node 20, true on Node 24
 * ```
 */
export function nodeStripsTypes(): boolean {
  const p = (globalThis as { process?: { features?: { typescript?: unknown }; execArgv?: string[]; env?: Record<string, string | undefined> } }).process;
  if (!p) return false;
  if (p.features && "typescript" in p.features) return Boolean(p.features.typescript);
  const flags = [...(p.execArgv ?? []), ...(p.env?.NODE_OPTIONS ?? "").split(/\s+/)];
  return flags.some((f) => f === "--experimental-strip-types" || f === "--experimental-transform-types");
}
