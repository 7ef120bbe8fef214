import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ALL_STATES, choosePrune, isTerminal, parseDuration, type TaskRecord } from "../../lib/internal.ts";
import { normalizeRetention } from "../../lib/retention/options.ts";
import { unneededIncarnations } from "../../lib/retention/incarnation-gc.ts";

const DAY = 86400_000;
const NOW = new Date("2026-06-01T00:00:00Z");

function task(id: string, state: TaskRecord["state"], finishedDaysAgo: number, acked: boolean): TaskRecord {
  const at = new Date(NOW.getTime() - finishedDaysAgo * DAY).toISOString();
  return { id, state, createdAt: at, finishedAt: isTerminal(state) ? at : null, acknowledgedAt: acked ? at : null } as TaskRecord;
}

describe("which tasks a prune removes", () => {
  it("only finished, acknowledged ones, oldest first", () => {
    const records = [
      task("new-acked", "exited", 1, true),
      task("old-acked", "killed", 30, true),
      task("old-unacked", "exited", 40, false),
      task("running", "running", 50, false),
      task("mid-acked", "lost", 10, true),
    ];
    expect(choosePrune(records, { olderThanSeconds: 0, keep: 0 }, NOW)).toEqual(["old-acked", "mid-acked", "new-acked"]);
    expect(choosePrune(records, { olderThanSeconds: 7 * 86400, keep: 0 }, NOW)).toEqual(["old-acked", "mid-acked"]);
    expect(choosePrune(records, { olderThanSeconds: 0, keep: 2 }, NOW)).toEqual(["old-acked"]);
    expect(choosePrune(records, { olderThanSeconds: 20 * 86400, keep: 2 }, NOW)).toEqual(["old-acked"]);
    expect(choosePrune(records, { olderThanSeconds: 0, keep: 3 }, NOW)).toEqual([]);
  });

  it("never removes a live or unacknowledged task, keeps the newest `keep`, and removes oldest first (property)", () => {
    const arbTask = fc.record({
      state: fc.constantFrom(...ALL_STATES),
      days: fc.integer({ min: 0, max: 100 }),
      acked: fc.boolean(),
    });
    fc.assert(fc.property(fc.array(arbTask, { maxLength: 40 }), fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 50 }), (specs, keep, olderDays) => {
      const records = specs.map((s, i) => task(`t-${i}`, s.state, s.days, s.acked));
      const removed = choosePrune(records, { olderThanSeconds: olderDays * 86400, keep }, NOW);
      const byId = new Map(records.map((r) => [r.id, r]));
      const eligible = records.filter((r) => isTerminal(r.state) && r.acknowledgedAt);
      for (const id of removed) {
        const r = byId.get(id)!;
        expect(isTerminal(r.state) && r.acknowledgedAt !== null).toBe(true);
        if (olderDays > 0) expect(NOW.getTime() - Date.parse(r.finishedAt!)).toBeGreaterThanOrEqual(olderDays * DAY);
      }
      expect(eligible.length - removed.length).toBeGreaterThanOrEqual(Math.min(keep, eligible.length));
      const times = removed.map((id) => Date.parse(byId.get(id)!.finishedAt!));
      expect([...times].sort((a, b) => a - b)).toEqual(times);
      // Whatever stays is never older than what went, within the same age rule.
      if (olderDays === 0 && removed.length) {
        const newestRemoved = Math.max(...times);
        const kept = eligible.filter((r) => !removed.includes(r.id));
        for (const r of kept) expect(Date.parse(r.finishedAt!)).toBeGreaterThanOrEqual(newestRemoved);
      }
    }));
  });
});

describe("retention and durations", () => {
  it("defaults to keeping the newest 1000, takes false, and names a bad field", () => {
    expect(normalizeRetention(undefined)).toEqual({ olderThanSeconds: 0, keep: 1000 });
    expect(normalizeRetention(false)).toBe(false);
    expect(normalizeRetention({ olderThanSeconds: 60 })).toEqual({ olderThanSeconds: 60, keep: 1000 });
    expect(() => normalizeRetention({ keep: -1 })).toThrow("Expected the `retention.keep` option to be an integer >= 0, got `-1` (number)");
    expect(() => normalizeRetention({ kep: 3 })).toThrow("`retention.kep`");
    expect(() => normalizeRetention("7d")).toThrow("`retention`");
  });

  it("reads durations and refuses what is not one", () => {
    expect(parseDuration("7d")).toBe(604800);
    expect(parseDuration("15m")).toBe(900);
    expect(parseDuration("2w")).toBe(1209600);
    expect(parseDuration("90")).toBe(90);
    expect(parseDuration("1.5h")).toBe(5400);
    for (const bad of ["", "soon", "-1d", "7 days", "d", "7y"]) expect(parseDuration(bad)).toBeNull();
  });

  it("drops only the incarnation files no one names", () => {
    expect(unneededIncarnations(["i-a.json", "i-b.json", ".i-c.json.tmp", "i-d.json"], new Set(["i-b", "i-d"]))).toEqual(["i-a.json"]);
  });
});
