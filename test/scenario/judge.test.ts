import { describe, expect, it } from "vitest";
import { judge } from "../../harness/shared/judge.ts";

const ok = { name: "holds", ok: true };
const no = { name: "breaks", ok: false };

describe("judge", () => {
  it("passes a scenario whose checks all hold, fails one with a failed check, no checks or an error", () => {
    expect(judge({ skipReason: null, error: null, checks: [ok] })).toEqual({ verdict: "pass", why: null });
    expect(judge({ skipReason: null, error: null, checks: [ok, no] })).toEqual({ verdict: "fail", why: "breaks" });
    expect(judge({ skipReason: null, error: null, checks: [] })).toEqual({ verdict: "fail", why: "no checks ran" });
    expect(judge({ skipReason: null, error: "Error: boom\n    at x", checks: [ok] })).toEqual({ verdict: "fail", why: "boom" });
  });

  it("calls a failed check of a scenario with `bug` reproduced, and all checks holding a failure that says to drop `bug`", () => {
    expect(judge({ skipReason: null, error: null, checks: [ok, no], bug: "issue 1" })).toEqual({ verdict: "reproduced", why: "shown: breaks did not hold" });
    const fixed = judge({ skipReason: null, error: null, checks: [ok], bug: "issue 1" });
    expect(fixed.verdict).toBe("fail");
    expect(fixed.why).toMatch(/no longer shows.*remove `bug`/);
  });

  it("never calls an error or a skip a reproduction", () => {
    expect(judge({ skipReason: null, error: "Error: module exited", checks: [no], bug: "b" }).verdict).toBe("fail");
    expect(judge({ skipReason: "no memory controller", error: null, checks: [no], bug: "b" })).toEqual({ verdict: "skip", why: "no memory controller" });
  });
});
