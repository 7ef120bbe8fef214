/**
 * One line on stderr for an old name that still works for one release:
 * what it is now, and that it goes. stdout stays the command's, so `--json`
 * output is the same under either name.
 *
 * @example
 * ```ts
 * import { sayDeprecated } from "./deprecation.ts";
 * sayDeprecated("outlive agent run", "--harness", "--agent");
 * // stderr: outlive agent run: deprecated: --harness is now --agent (the old name is removed in the next release)
 * ```
 */
export function sayDeprecated(where: string, old: string, replacement: string): void {
  console.error(`${where}: deprecated: ${old} is now ${replacement} (the old name is removed in the next release)`);
}
