import { createHash, randomBytes } from "node:crypto";
import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { EXECUTABLE_ASSETS, executableBytes, executableText, runningAsExecutable } from "../single-executable.ts";

/** The single executable as the shim's finder sees it: where it is, and the shim it carries. */
export interface ExecutableShim {
  /** The executable's own path: a shim beside it (the release archive's layout) comes first. */
  path: string;
  /** The shim it carries and that shim's SHA-256 (hex), as the build computed it; null when it carries none. */
  embedded: { sha256: string; bytes(): Uint8Array } | null;
}

/** Where an embedded shim is written: `$XDG_CACHE_HOME/outlive/shim/<sha256>/outlive-shim`. */
export function embeddedShimPath(cacheHome: string, sha256: string): string {
  return join(cacheHome, "outlive", "shim", sha256, "outlive-shim");
}

/**
 * The user's cache folder, as the XDG base directory spec has it:
 * `$XDG_CACHE_HOME` when absolute, else `$HOME/.cache`; null with neither.
 *
 * @example
 * ```ts
 * import { cacheHome } from "./embedded-shim.ts";
 * console.log(cacheHome({ XDG_CACHE_HOME: "relative", HOME: "/home/ada" })); // "/home/ada/.cache"
 * ```
 */
export function cacheHome(env: Record<string, string | undefined>): string | null {
  if (env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME)) return env.XDG_CACHE_HOME;
  return env.HOME && isAbsolute(env.HOME) ? join(env.HOME, ".cache") : null;
}

/**
 * This process as the single executable (lib/single-executable.ts), or null
 * when it is not one (node or deno running the package or the sources).
 */
export function thisExecutable(): ExecutableShim | null {
  if (!runningAsExecutable()) return null;
  const sha256 = executableText(EXECUTABLE_ASSETS.shimSha256)?.trim();
  return {
    path: process.execPath,
    embedded: sha256 ? { sha256, bytes: () => executableBytes(EXECUTABLE_ASSETS.shim) ?? new Uint8Array() } : null,
  };
}

function sha256Of(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** The file's SHA-256, or null where it cannot be read. */
function fileSha256(path: string): string | null {
  try {
    return sha256Of(readFileSync(path));
  } catch {
    return null;
  }
}

/**
 * The executable's own shim, written to `path` once and checked each time it
 * is asked for: a copy whose SHA-256 is the one the executable was built with
 * is used as it is; one that is missing or differs (damaged, or changed by
 * someone) is written again from the executable, atomically (a temp file in
 * the same folder, mode 0755, fsynced, renamed over), so a task never starts
 * under half a file or another program. With `write` false (a probe, which
 * changes nothing) the path is answered as it will be, and nothing is
 * written. Returns the path, or why there is none.
 */
export function placeEmbeddedShim(embedded: NonNullable<ExecutableShim["embedded"]>, path: string, write: boolean): { path: string } | { reason: string } {
  if (fileSha256(path) === embedded.sha256 || !write) return { path };
  const bytes = embedded.bytes();
  if (sha256Of(bytes) !== embedded.sha256) return { reason: `the shim carried inside the executable does not have the SHA-256 it was built with (${embedded.sha256}): the executable is damaged` };
  const dir = join(path, "..");
  const temp = join(dir, `.outlive-shim.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const fd = openSync(temp, "wx", 0o700);
    try {
      for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    chmodSync(temp, 0o755);
    renameSync(temp, path);
  } catch (error) {
    try {
      unlinkSync(temp);
    } catch {
      // never made
    }
    return { reason: `the shim carried inside the executable could not be written to ${path}: ${(error as Error).message}` };
  }
  return fileSha256(path) === embedded.sha256 ? { path } : { reason: `${path} does not have the SHA-256 just written (${embedded.sha256})` };
}
