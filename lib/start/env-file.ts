import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { parse } from "dotenv";

/** An env file as read at the door: its path, the variables it sets, and a digest of its bytes. */
export interface EnvFile {
  path: string;
  values: Record<string, string>;
  /** sha256 of the file's bytes, for the spec digest; the values themselves are never kept. */
  digest: string;
}

/** The largest env file taken. */
const MAX_BYTES = 1 << 20;

/**
 * One assignment as dotenv's `parse` reads it (dotenv 16-18, lib/main.js's
 * LINE): what it does not match it skips without a word, which here is a
 * malformed line, refused.
 */
const LINE = /(?:^|^)\s*(?:export\s+)?([\w.-]+)(?:\s*=\s*?|:\s+?)(\s*'(?:\\'|[^'])*'|\s*"(?:\\"|[^"])*"|\s*`(?:\\`|[^`])*`|[^#\r\n]+)?\s*(?:#.*)?(?:$|$)/gm;

/**
 * Reads a dotenv file (`NAME=value`, `export NAME=value`, quotes, `#`
 * comments, multi-line quoted values) with dotenv's own `parse`. What it
 * would skip silently is refused: a line that is neither an assignment, a
 * comment nor blank, a NUL byte, text that is not UTF-8. Throws an Error
 * whose message says why, for the caller to name the option.
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { readEnvFile } from "./env-file.ts";
 * const dir = mkdtempSync(join(tmpdir(), "outlive-env-"));
 * writeFileSync(join(dir, ".env"), "# the dev server\nPORT=5173\nexport GREETING=\"hello world\"\n");
 * console.log(readEnvFile(join(dir, ".env")).values); // { PORT: "5173", GREETING: "hello world" }
 * writeFileSync(join(dir, "bad.env"), "PORT=5173\nthis is not an assignment\n");
 * try { readEnvFile(join(dir, "bad.env")); } catch (e) { console.log((e as Error).message); } // "line 2 is not NAME=value, a comment or blank: ..."
 * rmSync(dir, { recursive: true });
 * ```
 */
export function readEnvFile(path: string): EnvFile {
  const bytes = readFileSync(path);
  if (bytes.length > MAX_BYTES) throw new Error(`it is ${bytes.length} bytes; at most ${MAX_BYTES} are taken`);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new Error("it is not UTF-8 text");
  }
  if (text.includes("\0")) throw new Error("it holds a NUL byte, which no variable can carry");
  const lines = text.replace(/\r\n?/g, "\n");
  // What LINE leaves of each line must be blank or a comment: a line dotenv skipped is a mistake, not a comment.
  const rest = lines.replace(LINE, (match) => match.replace(/[^\n]/g, " "));
  rest.split("\n").forEach((line, i) => {
    const t = line.trim();
    if (t !== "" && !t.startsWith("#")) {
      const shown = lines.split("\n")[i].slice(0, 40);
      throw new Error(`line ${i + 1} is not NAME=value, a comment or blank: ${JSON.stringify(shown)}`);
    }
  });
  return { path, values: parse(bytes), digest: createHash("sha256").update(bytes).digest("hex") };
}
