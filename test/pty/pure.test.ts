import { spawnSync } from "node:child_process";
import fc from "fast-check";
import { expect, it } from "vitest";
import { checkPtySize, unescapeKeys } from "../../lib/pty/mod.ts";
import { shellQuote } from "../../lib/pty/holder.ts";

it("checks a terminal size at the edge, naming the side and the value", () => {
  expect(checkPtySize({})).toEqual({ cols: 80, rows: 24 });
  expect(checkPtySize({ cols: 1, rows: 10000 })).toEqual({ cols: 1, rows: 10000 });
  for (const bad of [{ cols: 0 }, { cols: 100000 }, { rows: 1.5 }, { rows: "24" }, { cols: -1 }]) {
    expect(() => checkPtySize(bad)).toThrow(/Expected `pty\.(cols|rows)` to be a whole number from 1 to 10000, got/);
  }
  expect(() => checkPtySize(null)).toThrow(/Expected `pty` to be an object/);
});

it("turns send's escapes into the bytes of the keys, and names a bad one", () => {
  expect([...unescapeKeys("ls -l\\n")]).toEqual([...Buffer.from("ls -l\n")]);
  expect([...unescapeKeys("\\cc\\cd\\cz\\c[\\e\\r\\t\\\\\\x7f")]).toEqual([3, 4, 26, 27, 27, 13, 9, 92, 127]);
  expect([...unescapeKeys("é✓")]).toEqual([...Buffer.from("é✓")]);
  expect(() => unescapeKeys("a\\q")).toThrow(/only the escapes .* got "\\\\q" at character 2/);
  expect(() => unescapeKeys("\\x1")).toThrow(/got "\\\\x1"/);
  expect(() => unescapeKeys("end\\")).toThrow(/at character 4/);
});

it("quotes any argument into one shell word that sh reads back byte for byte", () => {
  fc.assert(
    fc.property(fc.string({ unit: "binary" }).filter((s) => !s.includes("\0")), (s) => {
      const r = spawnSync("/bin/sh", ["-c", `printf '%s' ${shellQuote(s)}`], { encoding: "utf8" });
      expect(r.stdout).toBe(s);
    }),
    { numRuns: 60 },
  );
});
