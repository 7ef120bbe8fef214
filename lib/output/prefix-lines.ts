import type { OutputChunk, OutputStream } from "./request.ts";

/**
 * Turns chunks of two streams into whole lines, each prefixed by its
 * stream (`[stdout] `, `[stderr] `), so a line of one is never cut by the
 * other. A gap becomes a line of its own saying how many bytes were
 * dropped. `end()` gives out what is left without a final line break.
 *
 * @example
 * ```ts
 * import { LinePrefixer } from "./prefix-lines.ts";
 * const p = new LinePrefixer();
 * const enc = new TextEncoder();
 * console.log(p.push({ stream: "stderr", offset: 0, data: enc.encode("oops\npart"), missed: 0 })); // "[stderr] oops\n"
 * console.log(p.end()); // "[stderr] part\n"
 * ```
 */
export class LinePrefixer {
  private readonly partial: Record<OutputStream, string> = { stdout: "", stderr: "" };
  private readonly decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };

  push(chunk: OutputChunk): string {
    const s = chunk.stream;
    if (chunk.missed > 0) {
      const cut = this.partial[s] ? `[${s}] ${this.partial[s]}\n` : "";
      this.partial[s] = "";
      return `${cut}[${s}] (${chunk.missed} bytes dropped by the output bound)\n`;
    }
    const text = this.partial[s] + this.decoders[s].decode(chunk.data, { stream: true });
    const lines = text.split("\n");
    this.partial[s] = lines.pop()!;
    return lines.map((l) => `[${s}] ${l}\n`).join("");
  }

  end(): string {
    let out = "";
    for (const s of ["stdout", "stderr"] as const) {
      const rest = this.partial[s] + this.decoders[s].decode();
      if (rest) out += `[${s}] ${rest}\n`;
      this.partial[s] = "";
    }
    return out;
  }
}
