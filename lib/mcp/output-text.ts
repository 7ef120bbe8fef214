/**
 * A chunk of a task's output as text a model reads, and the offset to ask
 * for next. Output need not be UTF-8 and a chunk may end inside a
 * character; such a trailing partial character is held back (the next
 * call starts at it, so it arrives whole) unless the chunk is the last of
 * the stream. Bytes that are not UTF-8 become U+FFFD. Pure.
 *
 * @example
 * ```ts
 * import { chunkText } from "./output-text.ts";
 * const bytes = Buffer.from("é", "utf8"); // two bytes
 * console.log(chunkText(bytes.subarray(0, 1), 100, false)); // { text: "", next: 100 }
 * console.log(chunkText(bytes, 100, false)); // { text: "é", next: 102 }
 * ```
 */
export function chunkText(bytes: Uint8Array, offset: number, last: boolean): { text: string; next: number } {
  const whole = last ? bytes.length : bytes.length - partialTail(bytes);
  return { text: new TextDecoder("utf-8").decode(bytes.subarray(0, whole)), next: offset + whole };
}

/** How many bytes at the end of `bytes` begin a UTF-8 character they do not finish (0–3). */
function partialTail(bytes: Uint8Array): number {
  // A character is at most 4 bytes, so only the last 3 can be an unfinished one.
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const b = bytes[bytes.length - back];
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: look further back for its lead
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}
