import { describe, expect, it } from "vitest";
import { chunkText } from "../../lib/mcp/output-text.ts";

describe("chunkText", () => {
  it("holds back a character a chunk cut in two, so the next chunk starts at it", () => {
    for (const char of ["é", "€", "𝄞"]) {
      const bytes = Buffer.from(`ab${char}`, "utf8");
      for (let cut = 3; cut < bytes.length; cut++) {
        const first = chunkText(bytes.subarray(0, cut), 10, false);
        expect(first, `${char} cut at ${cut}`).toEqual({ text: "ab", next: 12 });
        const second = chunkText(bytes.subarray(first.next - 10), first.next, true);
        expect(second.text).toBe(char);
      }
      expect(chunkText(bytes, 0, false)).toEqual({ text: `ab${char}`, next: bytes.length });
    }
  });

  it("gives the last chunk whole, bytes that are not UTF-8 as U+FFFD", () => {
    expect(chunkText(Buffer.from([0x61, 0xe2, 0x82]), 0, true)).toEqual({ text: "a\ufffd", next: 3 });
    expect(chunkText(Buffer.from([0xff, 0x61]), 5, false)).toEqual({ text: "\ufffda", next: 7 });
    expect(chunkText(new Uint8Array(0), 4, false)).toEqual({ text: "", next: 4 });
  });
});
