import { describe, expect, it } from "vitest";
import { isCurrentGeneration, type KeyState } from "../../lib/generation/mod.ts";

const table = (entries: Array<[string, KeyState]>) => new Map(entries);

describe("isCurrentGeneration (plain data)", () => {
  it("is true only for the generation that owns the key", () => {
    const t = table([["a", { current: 5, live: new Set([3, 5]) }]]);
    expect(isCurrentGeneration(t, "a", 5)).toBe(true);
    expect(isCurrentGeneration(t, "a", 3)).toBe(false);
    expect(isCurrentGeneration(t, "a", 6)).toBe(false);
  });

  it("treats a missing record as stale, never current", () => {
    expect(isCurrentGeneration(table([]), "a", 1)).toBe(false);
    expect(isCurrentGeneration(table([["b", { current: 1, live: new Set([1]) }]]), "a", 1)).toBe(false);
  });

  it("is false for everyone once the owner has settled, though a predecessor still drains", () => {
    // The reviewers' hole: the successor (4) exited and freed the key while 3 is still live.
    const t = table([["a", { current: null, live: new Set([3]) }]]);
    expect(isCurrentGeneration(t, "a", 3)).toBe(false);
    expect(isCurrentGeneration(t, "a", 4)).toBe(false);
  });

  it("does not mix keys", () => {
    const t = table([
      ["a", { current: 1, live: new Set([1]) }],
      ["b", { current: 2, live: new Set([2]) }],
    ]);
    expect(isCurrentGeneration(t, "a", 2)).toBe(false);
    expect(isCurrentGeneration(t, "b", 2)).toBe(true);
  });
});
