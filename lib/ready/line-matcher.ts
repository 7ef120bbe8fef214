import { TextDecoder } from "node:util";
import type { OutputStream } from "../output/request.ts";

/** Colour and cursor escapes (CSI) and title strings (OSC), which a dev server prints around its words. */
const ESCAPES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]/g;
/** The longest unfinished line kept between reads; beyond it the line is looked at as it stands. */
const MAX_CARRY = 64 * 1024;

/**
 * Looks for a line of a task's output that matches a pattern, as the output
 * comes in chunks: each stream's bytes are decoded as UTF-8 (a character cut
 * between two chunks is joined), escapes are taken out, and each line is
 * tried, the unfinished last one too (it has been printed).
 *
 * @example
 * ```ts
 * import { LineMatcher } from "./line-matcher.ts";
 * const m = new LineMatcher(new RegExp("ready in \\d+ ms"));
 * console.log(m.feed("stdout", new TextEncoder().encode("\x1b[32mVITE v7\x1b[39m  ready in 3")), m.matched); // false false
 * console.log(m.feed("stdout", new TextEncoder().encode("12 ms\n")), m.matched); // true true
 * ```
 */
export class LineMatcher {
  /** True once a line matched. */
  matched = false;
  private readonly carry: Record<OutputStream, string> = { stdout: "", stderr: "" };
  private readonly decoders: Record<OutputStream, TextDecoder> = { stdout: new TextDecoder(), stderr: new TextDecoder() };

  constructor(private readonly pattern: RegExp) {}

  /** Feeds the next bytes of `stream`; true when a line matched (now or before). */
  feed(stream: OutputStream, bytes: Uint8Array): boolean {
    if (this.matched) return true;
    const text = this.carry[stream] + this.decoders[stream].decode(bytes, { stream: true });
    const lines = text.split(/\r\n|\n|\r/);
    let rest = lines.pop() ?? "";
    for (const line of lines) if (this.test(line)) return (this.matched = true);
    if (this.test(rest)) return (this.matched = true);
    if (rest.length > MAX_CARRY) rest = rest.slice(-MAX_CARRY);
    this.carry[stream] = rest;
    return false;
  }

  /** Bytes the bound dropped before they were read: whatever line they cut is not whole any more. */
  skip(stream: OutputStream): void {
    this.carry[stream] = "";
    this.decoders[stream] = new TextDecoder();
  }

  private test(line: string): boolean {
    this.pattern.lastIndex = 0;
    return this.pattern.test(line.replace(ESCAPES, ""));
  }
}
