import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseRecord } from "../../lib/mod.ts";
import { parseRecord as parseBefore } from "./fixtures/parse-record-before-times.ts";

// keepAfterEndMs, mcpTask and cancelledAt (durable MCP tasks) are optional fields in schema 1: a
// record without them reads as before, and one with them reads in an older release, which ignores them.
const old = readFileSync(join(__dirname, "fixtures", "shell-record-v1.json"), "utf8");
const withFields = (over: Record<string, unknown>) => JSON.stringify({ ...JSON.parse(old), ...over });

describe("the durable-MCP-task fields of a record", () => {
  it("are absent from a record written before them, which still reads", () => {
    const r = parseRecord(old);
    expect(r.ok).toBe(true);
    if (r.ok) for (const f of ["keepAfterEndMs", "mcpTask", "cancelledAt"]) expect(r.record).not.toHaveProperty(f);
  });

  it("read now and in an older release, in schema 1", () => {
    const text = withFields({ keepAfterEndMs: 3_600_000, mcpTask: true, cancelledAt: "2026-12-01T10:00:00.000Z" });
    expect(JSON.parse(text).schemaVersion).toBe(1);
    for (const parse of [parseRecord, parseBefore]) {
      const r = parse(text);
      expect(r.ok).toBe(true);
      if (r.ok) expect(r.record).toMatchObject({ keepAfterEndMs: 3_600_000, mcpTask: true, cancelledAt: "2026-12-01T10:00:00.000Z" });
    }
  });

  it("refuse a value no outlive writes, naming the field", () => {
    for (const [field, value] of [["keepAfterEndMs", 0], ["keepAfterEndMs", 1.5], ["keepAfterEndMs", "60"], ["mcpTask", "yes"], ["cancelledAt", "later"]] as const) {
      const r = parseRecord(withFields({ [field]: value }));
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.problem.reason).toContain(`field "${field}"`);
    }
  });
});
