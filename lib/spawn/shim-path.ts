import { accessSync, constants, existsSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import { cacheHome, embeddedShimPath, type ExecutableShim, placeEmbeddedShim, thisExecutable } from "./embedded-shim.ts";

/** Which rule found the shim. */
export type ShimSource = "option" | "env" | "package" | "build" | "beside-executable" | "embedded";

/** Where `outlive-shim` is, or why it is nowhere to be had. */
export type ShimFound = { path: string; source: ShimSource } | { path: null; reason: string };

/** The environment variable that names a shim to use. */
export const SHIM_ENV = "OUTLIVE_SHIM";

/** The npm package that carries the shim built for this platform (its `bin/outlive-shim`). */
export const SHIM_PACKAGE = `@outlive/shim-${process.platform}-${process.arch}`;

/** Where scripts/build-shim.ts leaves the shim, below the folder that holds `shim/Cargo.toml`. */
export const SHIM_BUILD = "shim/target/x86_64-unknown-linux-gnu/release/outlive-shim";

export interface FindShimOptions {
  /** A shim named by the caller: used, or reported as unusable (never passed over for another). */
  shimPath?: string | null;
  /** Where `OUTLIVE_SHIM` is read; this process's environment when left out. */
  env?: Record<string, string | undefined>;
  /** The module to look from, for the package and the build; this file when left out. */
  from?: string;
  /**
   * The single executable this runs as, whose shim is beside it or inside
   * it (lib/spawn/embedded-shim.ts); this process's when left out (null
   * unless it is the executable). Where there is one, the package and the
   * build are not looked for: the executable has neither.
   */
  executable?: ExecutableShim | null;
  /**
   * Whether the executable's own shim may be written to the user's cache now
   * (default true); false answers where it will be and writes nothing, as a
   * probe must.
   */
  write?: boolean;
}

/**
 * Finds `outlive-shim`: the `shimPath` option, then `OUTLIVE_SHIM` (`none`:
 * no shim, the shell wrapper), then, run as the single executable, the shim
 * beside it (as the release archive unpacks) and else the copy it carries
 * inside, written once to `$XDG_CACHE_HOME/outlive/shim/<sha256>/` and its
 * hash checked at every find; otherwise the platform's npm package (`@outlive/shim-linux-x64`, resolved from the
 * library's own place), then the build beside the sources (the nearest
 * folder above the library that holds `shim/Cargo.toml`, so it answers the
 * same from `lib/`, as Deno runs it, and from the bundle `dist/pkg/`). A
 * path named by the option or the variable that is not an executable file
 * is reported, not passed over: a shim asked for and silently replaced would
 * be a surprise.
 *
 * @example
 * ```ts
 * import { findShim } from "./shim-path.ts";
 * console.log(findShim({ env: { OUTLIVE_SHIM: "/bin/true" } })); // { path: "/bin/true", source: "env" }
 * const missing = findShim({ shimPath: "/nonexistent/outlive-shim" });
 * console.log(missing.path, "reason" in missing && missing.reason.startsWith("the shimPath option")); // null true
 * ```
 */
export function findShim(opts: FindShimOptions = {}): ShimFound {
  const env = opts.env ?? process.env;
  const from = opts.from ?? import.meta.url;
  if (opts.shimPath) return named(opts.shimPath, "option", "the shimPath option");
  if (env[SHIM_ENV] === "none") return { path: null, reason: `${SHIM_ENV}=none asks for the shell wrapper` };
  if (env[SHIM_ENV]) return named(env[SHIM_ENV]!, "env", SHIM_ENV);
  const executable = opts.executable === undefined ? thisExecutable() : opts.executable;
  if (executable) return fromExecutable(executable, env, opts.write ?? true);
  const packaged = fromPackage(from);
  if (packaged) return { path: packaged, source: "package" };
  const root = sourceRoot(from);
  if (root === null) {
    return { path: null, reason: `no shimPath option, no ${SHIM_ENV}, no ${SHIM_PACKAGE} package, and no shim/Cargo.toml above ${where(from)}` };
  }
  const built = join(root, SHIM_BUILD);
  if (unusable(built) === null) return { path: built, source: "build" };
  return { path: null, reason: `no shimPath option, no ${SHIM_ENV}, no ${SHIM_PACKAGE} package, and ${built} is not built (node dist/scripts/build-shim.js)` };
}

function fromExecutable(executable: ExecutableShim, env: Record<string, string | undefined>, write: boolean): ShimFound {
  const beside = join(dirname(executable.path), "outlive-shim");
  if (unusable(beside) === null) return { path: beside, source: "beside-executable" };
  const none = `no shimPath option, no ${SHIM_ENV}, no outlive-shim beside ${executable.path}`;
  if (!executable.embedded) return { path: null, reason: `${none}, and the executable carries none` };
  const cache = cacheHome(env);
  if (cache === null) return { path: null, reason: `${none}, and neither XDG_CACHE_HOME nor HOME names a folder to write the executable's own to` };
  const placed = placeEmbeddedShim(executable.embedded, embeddedShimPath(cache, executable.embedded.sha256), write);
  return "path" in placed ? { path: placed.path, source: "embedded" } : { path: null, reason: `${none}, and ${placed.reason}` };
}

function named(path: string, source: ShimSource, what: string): ShimFound {
  const problem = isAbsolute(path) ? unusable(path) : "not an absolute path";
  return problem === null ? { path, source } : { path: null, reason: `${what} names ${path}, which is ${problem}` };
}

/** Why `path` cannot be run, or null. */
function unusable(path: string): string | null {
  try {
    if (!statSync(path).isFile()) return "not a regular file";
    accessSync(path, constants.X_OK);
    return null;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? "not there" : code === "EACCES" ? "not executable" : `unusable (${code})`;
  }
}

function fromPackage(from: string): string | null {
  try {
    const path = createRequire(from).resolve(`${SHIM_PACKAGE}/bin/outlive-shim`);
    return unusable(path) === null ? path : null;
  } catch {
    // Not installed: the package is optional (and not published for every platform).
    return null;
  }
}

function where(from: string): string {
  return from.startsWith("file:") ? dirname(fileURLToPath(from)) : dirname(from);
}

/** The nearest folder at or above `from` holding `shim/Cargo.toml`, or null. */
function sourceRoot(from: string): string | null {
  for (let dir = where(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, "shim", "Cargo.toml"))) return dir;
    if (dirname(dir) === dir) return null;
  }
}

const SOURCE_WORDS: Record<ShimSource, string> = {
  option: "the shimPath option",
  env: SHIM_ENV,
  package: "its npm package",
  build: "the build beside the sources",
  "beside-executable": "beside the executable",
  embedded: "the copy inside the executable, written to the user's cache",
};

/**
 * What a find means for the tasks, in the words `probe` and
 * `placementReason` use: the process each task runs under, and why. Pure.
 *
 * @example
 * ```ts
 * import { shimChoice } from "./shim-path.ts";
 * console.log(shimChoice({ path: "/opt/outlive-shim", source: "env" }).why); // "outlive-shim (/opt/outlive-shim, from OUTLIVE_SHIM)"
 * console.log(shimChoice({ path: null, reason: "OUTLIVE_SHIM=none asks for the shell wrapper" }).why); // "the shell wrapper: OUTLIVE_SHIM=none asks for the shell wrapper"
 * ```
 */
export function shimChoice(found: ShimFound): { path: string | null; why: string } {
  return found.path !== null
    ? { path: found.path, why: `outlive-shim (${found.path}, from ${SOURCE_WORDS[found.source]})` }
    : { path: null, why: `the shell wrapper: ${found.reason}` };
}
