import { open, stat } from "node:fs/promises";
import { censusError, describeThrown, errnoCode, type CensusError } from "../census-error.ts";

/**
 * Config files larger than this add nothing; `.claude.json` holds history, so it is generous.
 *
 * @example
 * ```ts
 * import { DEFAULT_MAX_CONFIG_BYTES } from "./config-file.ts";
 * console.log(DEFAULT_MAX_CONFIG_BYTES / 1024 / 1024); // 16 (MiB)
 * ```
 */
export const DEFAULT_MAX_CONFIG_BYTES = 16 * 1024 * 1024;

const READ_CHUNK_BYTES = 1024 * 1024;

export type ConfigText = { ok: true; text: string } | { ok: false; error: CensusError };

/**
 * Reads one config file, turning every way it can fail into a value:
 * missing, a directory or FIFO (never opened, since opening a FIFO blocks),
 * a symlink loop, larger than `maxBytes`, unreadable, or cut off by `signal`.
 *
 * @example
 * ```ts
 * import { readConfigText } from "./config-file.ts";
 * const r = await readConfigText("/nonexistent/.mcp.json", { maxBytes: 1024 });
 * console.log(r.ok || r.error.code); // "config-missing"
 * ```
 */
export async function readConfigText(path: string, options: { maxBytes: number; signal?: AbortSignal }): Promise<ConfigText> {
  try {
    const info = await stat(path);
    if (!info.isFile()) return fail("config-not-a-file", `${path} is not a regular file; it adds no servers`);
    if (info.size > options.maxBytes) return tooLarge(path, info.size, options.maxBytes);
    options.signal?.throwIfAborted();
    const handle = await open(path, "r");
    try {
      // Count while reading, not only at stat: the file may grow meanwhile.
      const chunks: Buffer[] = [];
      let total = 0;
      for (;;) {
        options.signal?.throwIfAborted();
        const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES);
        const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
        if (bytesRead === 0) break;
        total += bytesRead;
        if (total > options.maxBytes) return tooLarge(path, total, options.maxBytes);
        chunks.push(chunk.subarray(0, bytesRead));
      }
      return { ok: true, text: Buffer.concat(chunks, total).toString("utf8") };
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = errnoCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return fail("config-missing", `${path} does not exist; it adds no servers`);
    if (code === "ELOOP") return fail("config-symlink-loop", `${path} is a symlink loop; it adds no servers`);
    if (code === "ABORT_ERR" || (error as Error)?.name === "AbortError" || (error as Error)?.name === "TimeoutError") {
      return fail("config-timeout", `reading ${path} ran out of time; it adds no servers`);
    }
    return fail("config-unreadable", `${path} cannot be read (${code}: ${describeThrown(error)}); it adds no servers`);
  }
}

function fail(code: CensusError["code"], message: string): ConfigText {
  return { ok: false, error: censusError(code, message) };
}

function tooLarge(path: string, size: number, max: number): ConfigText {
  return fail("config-too-large", `${path} is ${size} bytes, over the ${max}-byte limit (option maxConfigBytes); it adds no servers`);
}
