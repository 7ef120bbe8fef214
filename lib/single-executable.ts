/**
 * Whether outlive runs as its single executable (`dist/exe/outlive`, a Node
 * single executable application built by scripts/build-exe.ts), and what
 * that executable carries inside: the version, the wire protocol's schema and
 * the task shim, as assets. Run from the npm package or by Deno, there is no
 * executable: every answer here is "no" or null, and the callers look on disk
 * as before.
 *
 * `node:sea` is reached through `process.getBuiltinModule`, never imported:
 * Deno has no such module, and an import of it would fail there at load.
 *
 * @module
 */

/** The names of the assets scripts/build-exe.ts puts in the executable. */
export const EXECUTABLE_ASSETS = {
  version: "version",
  schema: "outlive-rpc.schema.json",
  shim: "outlive-shim",
  /** The shim's SHA-256, hex, computed when the executable was built. */
  shimSha256: "outlive-shim.sha256",
} as const;

interface SeaModule {
  isSea(): boolean;
  getAsset(key: string): ArrayBuffer;
  getAsset(key: string, encoding: string): string;
}

function seaModule(): SeaModule | null {
  try {
    const get = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
    const sea = get?.call(process, "node:sea") as SeaModule | undefined;
    return sea && typeof sea.isSea === "function" && sea.isSea() ? sea : null;
  } catch {
    return null;
  }
}

/**
 * True when this process is outlive's single executable (its spawner mode
 * included).
 *
 * @example
 * ```ts
 * import { runningAsExecutable } from "./single-executable.ts";
 * console.log(runningAsExecutable()); // false (under node or deno)
 * ```
 */
export function runningAsExecutable(): boolean {
  return seaModule() !== null;
}

/**
 * An asset the executable carries, as text; null when this is not the
 * executable or it carries no such asset.
 *
 * @example
 * ```ts
 * import { executableText } from "./single-executable.ts";
 * console.log(executableText("version")); // null (under node or deno)
 * ```
 */
export function executableText(key: string): string | null {
  const sea = seaModule();
  if (!sea) return null;
  try {
    return sea.getAsset(key, "utf8");
  } catch {
    return null;
  }
}

/**
 * An asset the executable carries, as bytes (a copy); null as for `executableText`.
 *
 * @example
 * ```ts
 * import { executableBytes } from "./single-executable.ts";
 * console.log(executableBytes("outlive-shim")); // null (under node or deno)
 * ```
 */
export function executableBytes(key: string): Uint8Array | null {
  const sea = seaModule();
  if (!sea) return null;
  try {
    return new Uint8Array(sea.getAsset(key));
  } catch {
    return null;
  }
}
