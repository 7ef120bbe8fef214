import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";

/** What `io/exit` says: nothing yet, an exit code, or something no wrapper writes. */
export type ExitMarker =
  | { kind: "absent" }
  | { kind: "empty" }
  | { kind: "code"; code: number; writtenAt: string }
  | { kind: "garbage"; text: string; writtenAt: string };

/**
 * What `io/exit` holds from spawn until the wrapper writes: it reserves the
 * bytes of the code, so writing the code needs no new space on a full disk.
 */
export const EXIT_MARKER_PLACEHOLDER = "    ";

/**
 * Parses the marker's text: blank (absent, or the placeholder) until the
 * wrapper writes a decimal code padded to 3 characters and a newline
 * (wrappers before the placeholder wrote no padding).
 *
 * @example
 * ```ts
 * import { parseExitMarker } from "./exit-marker.ts";
 * console.log(parseExitMarker("    ", "2026-12-01T00:00:00.000Z").kind); // "empty"
 * console.log(parseExitMarker("7  \n", "2026-12-01T00:00:00.000Z")); // { kind: "code", code: 7, writtenAt: "2026-12-01T00:00:00.000Z" }
 * ```
 */
export function parseExitMarker(text: string, writtenAt: string): ExitMarker {
  if (text === "" || text === EXIT_MARKER_PLACEHOLDER) return { kind: "empty" };
  const m = /^(\d{1,3}) *\n?$/.exec(text);
  if (m && Number(m[1]) <= 255) return { kind: "code", code: Number(m[1]), writtenAt };
  return { kind: "garbage", text: text.slice(0, 64), writtenAt };
}

/** Reads `io/exit` without following a symlink. Synchronous underneath: a tiny local file, read often. */
export async function readExitMarker(path: string): Promise<ExitMarker> {
  return readExitMarkerNow(path);
}

/**
 * Reads `io/exit` now. The file's time is taken after its text: the code is written over a placeholder made at
 * spawn, and a time taken before the read could be the placeholder's while the text read is already the code,
 * dating the end at the start (seen under load: an end dated 545 ms early).
 */
export function readExitMarkerNow(path: string): ExitMarker {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ENOENT") return { kind: "absent" };
    if (code === "ELOOP") return { kind: "garbage", text: "(a symlink)", writtenAt: new Date().toISOString() };
    throw error;
  }
  try {
    const info = fstatSync(fd);
    if (info.size > 64) return { kind: "garbage", text: `(${info.size} bytes)`, writtenAt: info.mtime.toISOString() };
    const text = readFileSync(fd, "latin1");
    // Nothing writes after the code, so the time now is the code's (or later than a placeholder's, which has none).
    return parseExitMarker(text, fstatSync(fd).mtime.toISOString());
  } finally {
    closeSync(fd);
  }
}
