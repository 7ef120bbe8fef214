import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Supervisor, type TaskRecord } from "../../lib/mod.ts";
import { choosePrune } from "../../lib/retention/choose-prune.ts";
import { heldByFloor, keptUntil } from "../../lib/retention/keep-floor.ts";
import { waitFor } from "../support/wait.ts";

// A task's keepAfterEndMs (an MCP task's TTL) is a floor under retention: no prune by rule removes
// the task before its end plus that time, acknowledged or not; an explicit remove by name does.
const NOW = new Date("2026-12-01T12:00:00Z");
const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function ended(id: string, minutesAgo: number, extra: Partial<TaskRecord> = {}): TaskRecord {
  const at = new Date(NOW.getTime() - minutesAgo * 60_000).toISOString();
  return { id, state: "exited", createdAt: at, finishedAt: at, acknowledgedAt: at, ...extra } as TaskRecord;
}

describe("the floor of keepAfterEndMs", () => {
  it("holds a finished task until its end plus keepAfterEndMs, and no longer", () => {
    const r = ended("a", 10, { keepAfterEndMs: 15 * 60_000 });
    expect(keptUntil(r)).toBe(NOW.getTime() + 5 * 60_000);
    expect(heldByFloor(r, NOW)).toBe(true);
    expect(heldByFloor(r, new Date(NOW.getTime() + 5 * 60_000))).toBe(false);
    expect(keptUntil(ended("b", 10))).toBeNull();
    expect(heldByFloor(ended("b", 10), NOW)).toBe(false);
  });

  it("is honoured by every prune rule, unacknowledged ones included, and still counts among the newest kept", () => {
    const records = [
      ended("old", 60),
      ended("held", 50, { keepAfterEndMs: 60 * 60_000 }),
      ended("held-unacked", 40, { keepAfterEndMs: 60 * 60_000, acknowledgedAt: null }),
      ended("passed", 30, { keepAfterEndMs: 60_000 }),
      ended("new", 1),
    ];
    expect(choosePrune(records, { olderThanSeconds: 0, keep: 0 }, NOW)).toEqual(["old", "passed", "new"]);
    expect(choosePrune(records, { olderThanSeconds: 0, keep: 0, unacknowledged: true }, NOW)).toEqual(["old", "passed", "new"]);
    // The newest two are "passed" and "new"; "held" stays by its floor, not by the rule.
    expect(choosePrune(records, { olderThanSeconds: 0, keep: 2 }, NOW)).toEqual(["old"]);
    // Once the floor has passed, the rule alone decides.
    expect(choosePrune(records, { olderThanSeconds: 0, keep: 0 }, new Date(NOW.getTime() + 60 * 60_000))).toEqual(["old", "held", "passed", "new"]);
  });

  it("keeps an acknowledged task through a real prune until its floor passes, while one without goes at once", async () => {
    const root = mkdtempSync(join(tmpdir(), "outlive-keep-floor-"));
    roots.push(root);
    const sup = await Supervisor.open({ storage: root, log: () => {}, control: false });
    try {
      const kept = await sup.run({ argv: ["true"], keepAfterEndMs: 1500 });
      const plain = await sup.run({ argv: ["true"] });
      for (const t of [kept, plain]) {
        await sup.wait(t.id);
        await sup.ack(t.id);
      }
      expect(sup.get(kept.id)).toMatchObject({ keepAfterEndMs: 1500, acknowledgedAt: expect.any(String) });
      expect((await sup.prune({ olderThanSeconds: 0, keep: 0, unacknowledged: true })).removed).toEqual([plain.id]);
      expect(sup.get(kept.id).state).toBe("exited");
      const until = keptUntil(sup.get(kept.id))!;
      await waitFor("the floor to pass", () => Date.now() >= until, 10_000);
      expect((await sup.prune({ olderThanSeconds: 0, keep: 0 })).removed).toEqual([kept.id]);
    } finally {
      await sup.close();
    }
  });

  it("refuses a keepAfterEndMs that is not a positive whole number, naming it", async () => {
    const root = mkdtempSync(join(tmpdir(), "outlive-keep-floor-"));
    roots.push(root);
    const sup = await Supervisor.open({ storage: root, log: () => {}, control: false });
    try {
      for (const bad of [0, -5, 1.5, "60000"]) {
        await expect(sup.run({ argv: ["true"], keepAfterEndMs: bad as number })).rejects.toMatchObject({ code: "E_BAD_OPTION", message: expect.stringContaining("`keepAfterEndMs`") });
      }
      expect(sup.list()).toEqual([]);
    } finally {
      await sup.close();
    }
  });
});
