import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { EXECUTABLE_ASSETS, executableText } from "./single-executable.ts";

/**
 * outlive's version: built into the single executable (an asset, since it
 * has no package.json beside it), else from its package.json: the nearest
 * one above this module that names the package `outlive` (the module sits at
 * another depth in the built `dist/` than in the sources). Reads one file,
 * loads nothing else.
 *
 * @example
 * ```ts
 * import { outliveVersion } from "./version.ts";
 * console.log(/^\d+\.\d+\.\d+/.test(outliveVersion())); // true
 * ```
 */
export function outliveVersion(from?: string): string {
  if (from === undefined) {
    const built = executableText(EXECUTABLE_ASSETS.version);
    if (built !== null) return built.trim();
  }
  for (let dir = from ?? dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
      if (pkg.name === "outlive" && typeof pkg.version === "string") return pkg.version;
    }
    if (dirname(dir) === dir) return "unknown";
  }
}
