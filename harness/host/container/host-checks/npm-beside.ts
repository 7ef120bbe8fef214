import { existsSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * npm beside a Node binary (`<prefix>/lib/node_modules/npm`), when there is
 * one: every engine shares it with the machine beside Node.
 *
 * @example
 * ```ts
 * import { npmDirBeside } from "./npm-beside.ts";
 * console.log(npmDirBeside(process.execPath)); // e.g. "/usr/lib/node_modules/npm", or null
 * ```
 */
export function npmDirBeside(nodePath: string): string | null {
  const npm = join(dirname(dirname(nodePath)), "lib", "node_modules", "npm");
  return existsSync(join(npm, "bin", "npx-cli.js")) ? npm : null;
}
