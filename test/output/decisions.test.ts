import { describe, expect, it } from "vitest";
import { checkOutputOptions, LinePrefixer, startOfLastLines, trustedPart } from "../../lib/output/mod.ts";

const enc = (s: string) => new TextEncoder().encode(s);

describe("output decisions (pure)", () => {
  it("normalises output options and names what is wrong", () => {
    expect(checkOutputOptions()).toEqual([{ stream: "stdout", from: 0 }]);
    expect(checkOutputOptions({ stream: "stderr", from: 7 })).toEqual([{ stream: "stderr", from: 7 }]);
    expect(checkOutputOptions({ stream: "both", from: { stderr: 3 } })).toEqual([{ stream: "stdout", from: 0 }, { stream: "stderr", from: 3 }]);
    const fails = (o: object) => {
      try {
        checkOutputOptions(o as never);
      } catch (e) {
        return `${(e as { code: string }).code}: ${(e as Error).message}`;
      }
      return "accepted";
    };
    expect(fails({ stream: "stdin" })).toBe('E_BAD_OPTION: Expected the `stream` option to be "stdout", "stderr" or "both", got `"stdin"` (string)');
    expect(fails({ from: -1 })).toBe("E_BAD_OPTION: Expected the `from` option to be a non-negative integer byte offset, got `-1` (number)");
    expect(fails({ from: 1.5 })).toMatch(/`from` option .* got `1.5` \(number\)/);
    expect(fails({ from: "10" })).toMatch(/`from` option .* got `"10"` \(string\)/);
    expect(fails({ stream: "both", from: { stdout: -2 } })).toMatch(/`from.stdout` option/);
    expect(fails({ stream: "both", from: { stdin: 1 } })).toMatch(/`from` option to be keyed by stdout or stderr/);
  });

  it("trusts no byte below the dropped offset read after the read", () => {
    expect(trustedPart(0, 100, 0)).toEqual({ missed: 0, keepFrom: 0 });
    expect(trustedPart(50, 100, 50)).toEqual({ missed: 0, keepFrom: 0 });
    expect(trustedPart(50, 100, 80)).toEqual({ missed: 30, keepFrom: 30 });
    // Punched past everything read: all of it is missed, and more.
    expect(trustedPart(50, 100, 400)).toEqual({ missed: 350, keepFrom: 100 });
  });

  it("finds where the last N lines begin", () => {
    expect(startOfLastLines(enc("a\nb\nc\n"), 1)).toBe(4);
    expect(startOfLastLines(enc("a\nb\nc"), 1)).toBe(4);
    expect(startOfLastLines(enc("a\nb\nc\n"), 3)).toBe(-1);
    expect(startOfLastLines(enc("x\na\nb\nc\n"), 3)).toBe(2);
    expect(startOfLastLines(enc("a\n"), 0)).toBe(2);
  });

  it("prefixes whole lines by stream, never splitting a line or a UTF-8 character", () => {
    const p = new LinePrefixer();
    const euro = enc("€");
    let out = p.push({ stream: "stdout", offset: 0, data: enc("one\ntw"), missed: 0 });
    out += p.push({ stream: "stderr", offset: 0, data: euro.subarray(0, 1), missed: 0 });
    out += p.push({ stream: "stdout", offset: 6, data: enc("o\n"), missed: 0 });
    out += p.push({ stream: "stderr", offset: 1, data: euro.subarray(1), missed: 0 });
    out += p.push({ stream: "stderr", offset: 3, data: new Uint8Array(0), missed: 10 });
    out += p.end();
    expect(out).toBe("[stdout] one\n[stdout] two\n[stderr] €\n[stderr] (10 bytes dropped by the output bound)\n");
  });
});
