/**
 * Whether this Node strips TypeScript types itself, so `.ts` files import
 * with no compiler: `process.features.typescript` is "strip" or "transform"
 * on Node >= 23.6, and on 22.6+ started with `--experimental-strip-types`.
 *
 * @example
 * ```ts
 * import { nodeStripsTypes } from "./strip-types.ts";
 * console.log(nodeStripsTypes()); // false on Node 20, true on Node 24
 * ```
 */
export function nodeStripsTypes(): boolean {
  const features = (globalThis as { process?: { features?: { typescript?: unknown } } }).process?.features;
  return Boolean(features?.typescript);
}
