import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The nearest folder at or above `from` that holds a package.json, or null
 * when there is none up to `/`.
 *
 * @example
 * ```ts
 * import { nearestPackageDir } from "./project-root.ts";
 * console.log(nearestPackageDir(process.cwd())); // the project you are in, or null
 * ```
 */
export function nearestPackageDir(from: string): string | null {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) return null;
  }
}

/**
 * The outlive package's root: a checkout, or `node_modules/outlive` where
 * it is installed. Found from this file, so it answers the same from dist/
 * and from source, on the host and at /work/project inside the container.
 *
 * @example
 * ```ts
 * import { join } from "node:path";
 * import { projectRoot } from "./project-root.ts";
 * console.log(join(projectRoot(), "dist/scripts/outlive.js"));
 * ```
 */
export function projectRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const root = nearestPackageDir(here);
  if (root === null) throw new Error(`no package.json at or above ${here}: the harness runs from within its package`);
  return root;
}
