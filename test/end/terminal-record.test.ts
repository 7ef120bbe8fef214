import { describe, expect, it } from "vitest";
import { terminalRecord } from "../../lib/end/terminal-record.ts";
import { startedWithin } from "../../lib/spawn/spawn-placed.ts";
import type { TaskRecord } from "../../lib/store/record/record.ts";

const output = { lastOutputAt: null, tail: "", stdoutBytes: 0, stderrBytes: 0 };
const running = { startedAt: "2026-12-02T04:13:16.986Z", state: "running" } as TaskRecord;

describe("a task's end is never before its start", () => {
  it("an end marker a tick earlier than the start (a task shorter than the coarse clock's tick) reads as ending at its start", () => {
    const done = terminalRecord(running, { state: "exited", exitCode: 0, reason: "exited with code 0", finishedAt: "2026-12-02T04:13:16.984Z", finishedAtSource: "exit-marker" }, output, "", new Date());
    expect(done.finishedAt).toBe(running.startedAt);
    expect(done.durationMs).toBe(0);
    expect(done.finishedAtSource).toBe("exit-marker");
  });

  it("an end after the start keeps its own time", () => {
    const done = terminalRecord(running, { state: "exited", exitCode: 0, reason: "exited with code 0", finishedAt: "2026-12-02T04:13:17.986Z", finishedAtSource: "exit-marker" }, output, "", new Date());
    expect(done.finishedAt).toBe("2026-12-02T04:13:17.986Z");
    expect(done.durationMs).toBe(1000);
  });

  it("a start read in clock ticks is held to the window the spawn saw", () => {
    const window = { after: 1_000, before: 1_004 };
    expect(startedWithin(new Date(990), window)).toBe(1_000);
    expect(startedWithin(new Date(1_002), window)).toBe(1_002);
    expect(startedWithin(new Date(1_010), window)).toBe(1_004);
  });
});
