import { describe, expect, it } from "vitest";
import { brokenPromises, type FoundRecord, type TaskLedger } from "../../harness/inside/power/promises.ts";
import { planCuts } from "../../harness/cases/soak-power.ts";

const end = { state: "exited", exitCode: 3, finishedAt: "2026-12-05T04:00:00.000Z" };
const rec = (over: Partial<Extract<FoundRecord, { ok: true }>> = {}): FoundRecord => ({ ok: true, ...end, acknowledgedAt: null, reason: null, ...over });
const none = { before: 0, now: 0 };

describe("soak-power: the promises a power cut must not break", () => {
  it("holds when the disk has what was promised", () => {
    const ledger: Record<string, TaskLedger> = { a: { run: "returned", end, ack: "returned" }, b: { run: "returned" }, c: { run: "asked" } };
    const found = new Map([["a", rec({ acknowledgedAt: "t" })], ["b", rec({ state: "lost", exitCode: null, finishedAt: "x", reason: "host rebooted (boot id changed)" })]]);
    expect(brokenPromises(ledger, found, [], none)).toEqual([]);
  });

  it("an ack asked but unanswered at the cut may or may not have landed", () => {
    const ledger: Record<string, TaskLedger> = { a: { run: "returned", end, ack: "asked" }, b: { run: "returned", end, ack: "asked" } };
    expect(brokenPromises(ledger, new Map([["a", rec({ acknowledgedAt: "t" })], ["b", rec()]]), [], none)).toEqual([]);
  });

  it("names each broken promise", () => {
    const ledger: Record<string, TaskLedger> = {
      gone: { run: "returned" },
      endGone: { run: "returned", end },
      endChanged: { run: "returned", end },
      ackLost: { run: "returned", end, ack: "returned" },
      invented: { run: "returned", end },
      unknown: { run: "returned" },
      half: { run: "returned" },
    };
    const found = new Map<string, FoundRecord>([
      ["endChanged", rec({ state: "lost", exitCode: null, reason: "host rebooted" })],
      ["ackLost", rec()],
      ["invented", rec({ acknowledgedAt: "t" })],
      ["unknown", rec({ state: "lost", exitCode: null, reason: "its wrapper is gone" })],
      ["half", { ok: false, error: "Unexpected end of JSON input" }],
      ["stranger", rec()],
    ]);
    const broken = brokenPromises(ledger, found, ["t-1.2026"], { before: 4, now: 2 });
    expect(broken.map((b) => `${b.promise} ${b.id}`).sort()).toEqual([
      "ack-kept ackLost",
      "ack-not-invented invented",
      "end-kept endChanged",
      "end-kept endGone",
      "floor-kept generation-floor",
      "never-unknown gone",
      "never-unknown unknown",
      "no-quarantine t-1.2026",
      "no-stranger stranger",
      "whole-record half",
    ]);
  });

  it("a task a prune may have taken may be gone, but not changed", () => {
    const ledger: Record<string, TaskLedger> = { a: { run: "returned", end, ack: "returned", prunable: true }, b: { run: "returned", end, ack: "returned", prunable: true } };
    const broken = brokenPromises(ledger, new Map([["b", rec({ exitCode: 4, acknowledgedAt: "t" })]]), [], none);
    expect(broken.map((b) => `${b.promise} ${b.id}`)).toEqual(["end-kept b"]);
  });

  it("the seed fixes the plan: half at moments, half at chosen writes", () => {
    const plan = planCuts(42, 30);
    expect(planCuts(42, 30)).toEqual(plan);
    expect(plan.filter((c) => c.by === "moment")).toHaveLength(15);
    expect(plan.filter((c) => c.by === "write").every((c) => ["start", "end", "ack", "floor", "retention"].includes(c.kind!) && c.k! >= 1)).toBe(true);
  });
});
