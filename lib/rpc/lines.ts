/** What the splitter makes of the bytes it is given. */
export type LineEvent = { line: string } | { overlong: number };

/**
 * Splits a byte stream into `\n`-terminated lines (a `\r` before the `\n`
 * goes too), holding at most `maxBytes` of an unfinished line: a longer
 * one is reported once as `overlong` and skipped to its newline, so one
 * bad client line never grows the server's memory nor ends it. Pure.
 *
 * @example
 * ```ts
 * import { LineSplitter } from "./lines.ts";
 * const split = new LineSplitter(8);
 * console.log(split.push(new TextEncoder().encode('{"a":1}\n{"b"')));  // [ { line: '{"a":1}' } ]
 * console.log(split.push(new TextEncoder().encode(':2}\nxxxxxxxxxxxx\n'))); // [ { line: '{"b":2}' }, { overlong: 12 } ]
 * ```
 */
export class LineSplitter {
  private parts: Uint8Array[] = [];
  private held = 0;
  /** Bytes of the line being skipped (it grew past the bound); -1 when none is. */
  private skipping = -1;
  private readonly decoder = new TextDecoder();

  constructor(readonly maxBytes: number) {}

  push(chunk: Uint8Array): LineEvent[] {
    const events: LineEvent[] = [];
    let start = 0;
    for (;;) {
      const end = chunk.indexOf(0x0a, start);
      const piece = chunk.subarray(start, end < 0 ? chunk.byteLength : end);
      if (this.skipping >= 0) {
        this.skipping += piece.byteLength;
      } else if (this.held + piece.byteLength > this.maxBytes) {
        this.skipping = this.held + piece.byteLength;
        this.parts = [];
        this.held = 0;
      } else if (piece.byteLength > 0) {
        // Copied: the caller may reuse its buffer once push returns.
        this.parts.push(end < 0 ? piece.slice() : piece);
        this.held += piece.byteLength;
      }
      if (end < 0) return events;
      if (this.skipping >= 0) {
        events.push({ overlong: this.skipping });
        this.skipping = -1;
      } else {
        const line = this.take();
        if (line.trim() !== "") events.push({ line });
      }
      start = end + 1;
    }
  }

  private take(): string {
    const bytes = this.parts.length === 1 ? this.parts[0] : concat(this.parts, this.held);
    this.parts = [];
    this.held = 0;
    const text = this.decoder.decode(bytes);
    return text.endsWith("\r") ? text.slice(0, -1) : text;
  }
}

function concat(parts: Uint8Array[], length: number): Uint8Array {
  const all = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.byteLength;
  }
  return all;
}
