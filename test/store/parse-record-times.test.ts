import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseRecord } from "../../lib/mod.ts";
import { parseRecord as parseBefore } from "./fixtures/parse-record-before-times.ts";

// finishedAtSource, endedAfter and durationMs are optional: a record written before them reads, and a
// record written with them reads in the release before them (which ignores fields it does not know).
const CLI = join(__dirname, "..", "..", "dist", "scripts", "outlive.js");
const old = readFileSync(join(__dirname, "fixtures", "shell-record-v1.json"), "utf8");
const withTimes = (over: Record<string, unknown>) => JSON.stringify({ ...JSON.parse(old), ...over });
const storage = mkdtempSync(join(tmpdir(), "outlive-parse-times-"));
afterAll(() => rmSync(storage, { recursive: true, force: true }));

describe("the true-time fields are optional", () => {
  it("a record written before them still reads, without them", () => {
    const r = parseRecord(old);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.record).not.toHaveProperty("finishedAtSource");
    expect(r.record).not.toHaveProperty("durationMs");
  });

  it("a record with them reads now and in the release before them", () => {
    const text = withTimes({ finishedAtSource: "seen-gone", endedAfter: "2026-11-30T10:00:00.900Z", durationMs: 1000 });
    for (const parse of [parseRecord, parseBefore]) {
      const r = parse(text);
      expect(r.ok).toBe(true);
      if (r.ok) expect(r.record).toMatchObject({ finishedAtSource: "seen-gone", endedAfter: "2026-11-30T10:00:00.900Z", durationMs: 1000 });
    }
    // Null where they say nothing (a task that never started has no duration).
    expect(parseRecord(withTimes({ finishedAtSource: null, endedAfter: null, durationMs: null })).ok).toBe(true);
    // A source a later release may add (no schema bump for an optional field) does not make the record corrupt.
    expect(parseRecord(withTimes({ finishedAtSource: "pidfd-exit" })).ok).toBe(true);
  });

  it("a value no outlive writes is refused, naming the field", () => {
    for (const [field, value] of [["durationMs", -1], ["durationMs", 1.5], ["endedAfter", "yesterday"], ["finishedAtSource", 7]] as const) {
      const r = parseRecord(withTimes({ [field]: value }));
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.problem.reason).toContain(`field "${field}"`);
    }
  });

  it("a record the CLI writes now reads in the release before", () => {
    const run = spawnSync(process.execPath, [CLI, "run", "--storage", storage, "--id", "now", "--", "sh", "-c", "exit 5"], { encoding: "utf8" });
    expect(run.status).toBe(0);
    expect(spawnSync(process.execPath, [CLI, "wait", "--storage", storage, "now"]).status).toBe(5);
    const text = readFileSync(join(storage, "tasks", "now", "record.json"), "utf8");
    expect(JSON.parse(text)).toMatchObject({ state: "exited", finishedAtSource: "exit-marker" });
    const before = parseBefore(text, "now");
    expect(before.ok).toBe(true);
    if (before.ok) expect(before.record).toMatchObject({ state: "exited", exitCode: 5 });
  });
});

describe("never_started, a state the release before it does not know", () => {
  it("is written in schema 2, which that release leaves untouched as newer instead of calling corrupt; every other end stays schema 1", async () => {
    const { terminalRecord } = await import("../../lib/end/terminal-record.ts");
    const starting = JSON.parse(old);
    const output = { lastOutputAt: null, tail: null, stdoutBytes: 0, stderrBytes: 0 };
    const never = terminalRecord({ ...starting, state: "starting" }, { state: "never_started", exitCode: null, reason: "never started" }, output as never, "", new Date());
    expect(never.schemaVersion).toBe(2);
    const now = parseRecord(JSON.stringify(never));
    expect(now.ok && now.record.state).toBe("never_started");
    const before = parseBefore(JSON.stringify(never));
    expect(before).toMatchObject({ ok: false, problem: { kind: "newer-schema", schemaVersion: 2 } });
    const lost = terminalRecord({ ...starting, state: "starting" }, { state: "lost", exitCode: null, reason: "spawn did not complete" }, output as never, "", new Date());
    expect(lost.schemaVersion).toBe(1);
    expect(parseBefore(JSON.stringify(lost)).ok).toBe(true);
  });
});
