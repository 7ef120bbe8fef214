import { describe, expect, it } from "vitest";
import { decideReplay, type ReplayEvidence, SCHEMA_VERSION, type TaskRecord } from "../../lib/internal.ts";
import { endTime } from "../../lib/replay/end-time.ts";

// When a task ended, and what says so, as a pure table: the best evidence at hand dates the end.
const T0 = "2026-11-30T10:00:00.000Z";
const record = (over: Partial<TaskRecord> = {}): TaskRecord => ({
  schemaVersion: SCHEMA_VERSION, id: "t-1", key: null, generation: null, command: { argv: ["sleep", "60"] }, cwd: "/",
  state: "running", exitCode: null, reason: null, createdAt: T0, startedAt: "2026-11-30T10:00:00.050Z", finishedAt: null,
  lastOutputAt: null, outputTail: null, timeoutSeconds: null, deadlineAt: "2026-12-01T10:00:00.000Z", deadlineIsTimeout: false,
  memoryMaxBytes: null, pid: 4242, pgid: 4242, startTime: "777", bootId: "boot-a", incarnation: "i-old", supervisorCgroup: null,
  placement: "process-group", location: {}, killStartedAt: null, killReason: null, killState: null, acknowledgedAt: null,
  ...over,
});
const evidence = (over: Partial<ReplayEvidence> = {}): ReplayEvidence => ({
  bootIdNow: "boot-a", marker: { kind: "empty" }, timedOutAt: null, pid: "absent", remnants: false, oomKills: null,
  spawnerAlive: false, restartedAt: "2026-11-30T10:04:00.000Z", lastOutputAt: "2026-11-30T10:01:00.000Z",
  lookedAt: "2026-11-30T10:04:00.100Z",
  ...over,
});
const marker = { kind: "code" as const, code: 0, writtenAt: "2026-11-30T10:02:00.000Z" };

describe("endTime: what dates an end", () => {
  it("the exit marker's own time first, even when a timed-out marker and an emptied cgroup were seen", () => {
    const ev = evidence({ marker, timedOutAt: "2026-11-30T10:01:30.000Z", emptiedAt: "2026-11-30T10:02:01.000Z" });
    expect(endTime(record(), ev)).toEqual({ finishedAt: marker.writtenAt, finishedAtSource: "exit-marker", endedAfter: null });
  });

  it("with an exit code, the moment the wrapper marked its command's end (io/ended), which comes before the code", () => {
    const ended = "2026-11-30T10:01:59.900Z";
    expect(endTime(record(), evidence({ marker, commandEndedAt: ended })).finishedAt).toBe(ended);
    // A mark after the code is no mark of this end: the code's own time dates it.
    expect(endTime(record(), evidence({ marker, commandEndedAt: "2026-11-30T10:02:00.500Z" })).finishedAt).toBe(marker.writtenAt);
  });

  it("without an exit code, the watchdog's timed-out marker", () => {
    const ev = evidence({ timedOutAt: "2026-11-30T10:01:30.000Z", emptiedAt: "2026-11-30T10:01:32.000Z" });
    expect(endTime(record(), ev)).toEqual({ finishedAt: "2026-11-30T10:01:30.000Z", finishedAtSource: "timed-out-marker", endedAfter: null });
  });

  it("then the moment a live watch saw the cgroup empty", () => {
    expect(endTime(record(), evidence({ emptiedAt: "2026-11-30T10:03:00.000Z" })))
      .toEqual({ finishedAt: "2026-11-30T10:03:00.000Z", finishedAtSource: "cgroup-emptied", endedAfter: null });
  });

  it("else the first moment it was seen gone, after the last moment it was known alive (seen, or writing output)", () => {
    const seen = evidence({ seenAliveAt: "2026-11-30T10:03:30.000Z", seenGoneAt: "2026-11-30T10:03:31.000Z" });
    expect(endTime(record(), seen))
      .toEqual({ finishedAt: "2026-11-30T10:03:31.000Z", finishedAtSource: "seen-gone", endedAfter: "2026-11-30T10:03:30.000Z" });
    // Nobody watched (it ended while no supervisor ran): its last output is the last sign of life, this look the first of its end.
    expect(endTime(record(), evidence()))
      .toEqual({ finishedAt: "2026-11-30T10:04:00.100Z", finishedAtSource: "seen-gone", endedAfter: "2026-11-30T10:01:00.000Z" });
    // No output either: it was alive when it started.
    expect(endTime(record(), evidence({ lastOutputAt: null })).endedAfter).toBe("2026-11-30T10:00:00.050Z");
  });

  it("a task of an earlier boot was gone by the time this boot began", () => {
    const ev = evidence({ bootIdNow: "boot-b", bootedAt: "2026-11-30T10:03:00.000Z" });
    expect(endTime(record(), ev))
      .toEqual({ finishedAt: "2026-11-30T10:03:00.000Z", finishedAtSource: "seen-gone", endedAfter: "2026-11-30T10:01:00.000Z" });
    // The same boot: the boot moment says nothing about it.
    expect(endTime(record(), evidence({ bootedAt: "2026-11-30T09:00:00.000Z" })).finishedAt).toBe("2026-11-30T10:04:00.100Z");
  });

  it("a process that runs on outside the task's cgroup is not said to have ended", () => {
    const d = decideReplay(record(), evidence({ pid: "same-elsewhere" }));
    expect(d).toMatchObject({ state: "lost", finishedAtSource: "seen-gone" });
    expect((d as { reason: string }).reason).not.toContain("ended between");
  });

  it("a replay decision carries the time, and says the window in its reason only when the end was noticed later", () => {
    expect(decideReplay(record(), evidence())).toMatchObject({
      kind: "finish",
      state: "lost",
      finishedAt: "2026-11-30T10:04:00.100Z",
      finishedAtSource: "seen-gone",
      endedAfter: "2026-11-30T10:01:00.000Z",
      reason: expect.stringMatching(/; ended between 2026-11-30T10:01:00\.000Z and 2026-11-30T10:04:00\.100Z$/),
    });
    const killed = decideReplay(record({ state: "killing", killReason: "killed by request", killState: "killed" }),
      evidence({ seenAliveAt: "2026-11-30T10:03:59.000Z", seenGoneAt: "2026-11-30T10:03:59.020Z" }));
    expect(killed).toMatchObject({ state: "killed", finishedAt: "2026-11-30T10:03:59.020Z", endedAfter: "2026-11-30T10:03:59.000Z" });
    expect((killed as { reason: string }).reason).toBe(
      "killed by request (no exit code: it ended while being killed); ended between 2026-11-30T10:03:59.000Z and 2026-11-30T10:03:59.020Z",
    );
    const exited = decideReplay(record(), evidence({ marker }));
    expect(exited).toMatchObject({ reason: "exited with code 0", finishedAtSource: "exit-marker" });
  });
});
