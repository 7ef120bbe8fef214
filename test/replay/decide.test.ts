import { describe, expect, it } from "vitest";
import { decideReplay, type ReplayEvidence, SCHEMA_VERSION, type TaskRecord } from "../../lib/internal.ts";

const T0 = "2026-11-30T10:00:00.000Z";
const record = (over: Partial<TaskRecord> = {}): TaskRecord => ({
  schemaVersion: SCHEMA_VERSION,
  id: "t-1",
  key: null,
  generation: null,
  command: { argv: ["sleep", "60"] },
  cwd: "/",
  state: "running",
  exitCode: null,
  reason: null,
  createdAt: T0,
  startedAt: T0,
  finishedAt: null,
  lastOutputAt: null,
  outputTail: null,
  timeoutSeconds: null,
  deadlineAt: "2026-12-01T10:00:00.000Z",
  deadlineIsTimeout: false,
  memoryMaxBytes: null,
  pid: 4242,
  pgid: 4242,
  startTime: "777",
  bootId: "boot-a",
  incarnation: "i-old",
  supervisorCgroup: "/daemon/module.service",
  placement: "cgroup-v2",
  location: { cgroup: "/outlive/outlive-task-t-1", cgroupDir: "/sys/fs/cgroup/outlive/outlive-task-t-1" },
  killStartedAt: null,
  killReason: null,
  killState: null,
  acknowledgedAt: null,
  ...over,
});
const evidence = (over: Partial<ReplayEvidence> = {}): ReplayEvidence => ({
  bootIdNow: "boot-a",
  marker: { kind: "empty" },
  timedOutAt: null,
  pid: "absent",
  remnants: false,
  oomKills: null,
  spawnerAlive: false,
  restartedAt: "2026-11-30T10:04:00.000Z",
  lastOutputAt: "2026-11-30T10:03:00.000Z",
  ...over,
});
const code = (c: number, at = "2026-11-30T10:02:00.000Z") => ({ kind: "code" as const, code: c, writtenAt: at });

describe("decideReplay: the decision table", () => {
  it("leaves terminal records alone, whatever the evidence", () => {
    for (const state of ["exited", "killed", "timed_out", "oom_killed", "lost"] as const) {
      expect(decideReplay(record({ state }), evidence({ marker: code(3), pid: "same" }))).toEqual({ kind: "unchanged" });
    }
  });

  it("a marker is the real result, whatever the record said", () => {
    expect(decideReplay(record(), evidence({ marker: code(7) }))).toMatchObject({ kind: "finish", state: "exited", exitCode: 7, reason: "exited with code 7" });
    expect(decideReplay(record({ state: "starting", pid: null }), evidence({ marker: code(0) }))).toMatchObject({ state: "exited", exitCode: 0 });
    expect(decideReplay(record(), evidence({ marker: code(143) }))).toMatchObject({ state: "exited", exitCode: 143, reason: "ended by SIGTERM (exit code 143)" });
  });

  it("a TERM from the host's shutdown says so, after a reboot too; outlive's own kill and a deadline still come first", () => {
    const shutdown = { marker: code(143), hostStopping: true, bootIdNow: "boot-b" };
    expect(decideReplay(record(), evidence(shutdown))).toMatchObject({
      state: "exited",
      exitCode: 143,
      reason: "ended by SIGTERM (exit code 143); the host's shutdown ended it (its wrapper got SIGTERM while systemd was stopping the system)",
    });
    // Without the wrapper's word it is a plain TERM: nothing is invented from the changed boot id alone.
    expect(decideReplay(record(), evidence({ ...shutdown, hostStopping: false }))).toMatchObject({ reason: "ended by SIGTERM (exit code 143)" });
    // Asked and not answered in time: said so, neither the shutdown claimed nor denied.
    const unanswered = { ...shutdown, hostStopping: false, hostUnanswered: "no answer within 9000 ms of the TERM" };
    expect(decideReplay(record(), evidence(unanswered))).toMatchObject({
      state: "exited",
      exitCode: 143,
      reason: "ended by SIGTERM (exit code 143); a SIGTERM came from outside outlive, and whether the host was shutting down went unanswered (no answer within 9000 ms of the TERM)",
    });
    expect(decideReplay(record({ state: "killing", killReason: "killed by outlive", killState: "killed" }), evidence(shutdown))).toMatchObject({ state: "killed" });
    expect(decideReplay(record(), evidence({ ...shutdown, timedOutAt: "2026-11-30T10:01:00.000Z" }))).toMatchObject({ state: "timed_out" });
  });

  it("starting without a marker: spawn did not complete — unless its wrapper was found in its own place", () => {
    expect(decideReplay(record({ state: "starting", pid: null }), evidence())).toMatchObject({ state: "lost", reason: expect.stringContaining("spawn did not complete") });
    const found = { pid: 77, startTime: "99", location: { cgroup: "/outlive/outlive-task-t-1", cgroupDir: "/sys/fs/cgroup/outlive/outlive-task-t-1" } };
    expect(decideReplay(record({ state: "starting", pid: null }), evidence({ located: found }))).toEqual({ kind: "adopt", resumeKill: false, found });
    // An exit code still wins over a found wrapper.
    expect(decideReplay(record({ state: "starting", pid: null }), evidence({ located: found, marker: code(0) }))).toMatchObject({ state: "exited" });
  });

  it("the shim refused the task (io/shim-refused, no code): never_started in the shim's words, not lost", () => {
    const line = 'outlive-shim: watch: expected inotify or poll, got "sideways"';
    const refused = { shimRefused: line };
    for (const state of ["running", "killing"] as const) {
      expect(decideReplay(record({ state }), evidence(refused))).toMatchObject({
        kind: "finish",
        state: "never_started",
        exitCode: null,
        reason: expect.stringMatching(/^never started: outlive-shim refused it \(outlive-shim: watch: expected inotify or poll, got "sideways"\); its command did not run/),
      });
    }
    expect(decideReplay(record({ state: "starting", pid: null }), evidence(refused))).toMatchObject({ state: "never_started" });
    // Its shim still there (about to exit): not decided yet. A code wins: the command ran.
    expect(decideReplay(record(), evidence({ ...refused, pid: "same" }))).toEqual({ kind: "adopt", resumeKill: false });
    expect(decideReplay(record(), evidence({ ...refused, marker: code(0) }))).toMatchObject({ state: "exited", exitCode: 0 });
    // Without the file, as before: lost.
    expect(decideReplay(record(), evidence())).toMatchObject({ state: "lost" });
  });

  it("starting, not found, and nothing of its command ran: never_started with the time run was asked, not lost", () => {
    const r = record({ state: "starting", pid: null });
    const d = decideReplay(r, evidence({ commandStarted: false }));
    expect(d).toMatchObject({ kind: "finish", state: "never_started", exitCode: null });
    expect(d).toMatchObject({ reason: expect.stringContaining(`before its command ran (requested at ${r.createdAt}`) });
    // Its command had started, or that cannot be told (a PTY task, a full disk): the spawn did not complete, lost.
    expect(decideReplay(r, evidence({ commandStarted: true }))).toMatchObject({ state: "lost", reason: expect.stringContaining("spawn did not complete") });
    expect(decideReplay(r, evidence({ commandStarted: null }))).toMatchObject({ state: "lost", reason: expect.stringContaining("spawn did not complete") });
    // Found in its place, it runs: adopted, whatever else is said.
    const found = { pid: 4242, startTime: "99", location: { unit: "outlive-task-t-1.scope" } };
    expect(decideReplay(r, evidence({ commandStarted: false, located: found }))).toEqual({ kind: "adopt", resumeKill: false, found });
    // From another boot, what reached the disk proves nothing: the host rebooted.
    expect(decideReplay(r, evidence({ commandStarted: false, bootIdNow: "boot-b" }))).toMatchObject({ state: "lost", reason: expect.stringContaining("the host rebooted") });
  });

  it("starting from another boot: the host rebooted, not a spawn cut short (live states are not flushed, so `running` may not have reached the disk)", () => {
    const d = decideReplay(record({ state: "starting", pid: null }), evidence({ bootIdNow: "boot-b" }));
    expect(d).toMatchObject({ kind: "finish", state: "lost", exitCode: null, reason: expect.stringContaining("the host rebooted (boot id changed) while it was starting or running") });
    expect(d).not.toMatchObject({ reason: expect.stringContaining("spawn did not complete") });
    // Its exit code, where one reached the disk, still wins.
    expect(decideReplay(record({ state: "starting", pid: null }), evidence({ bootIdNow: "boot-b", marker: code(3) }))).toMatchObject({ state: "exited", exitCode: 3 });
  });

  it("alive with matching identity: adopted; a kill under way resumes", () => {
    expect(decideReplay(record(), evidence({ pid: "same" }))).toEqual({ kind: "adopt", resumeKill: false });
    expect(decideReplay(record({ state: "killing", killStartedAt: T0, killReason: "killed by request", killState: "killed" }), evidence({ pid: "same" })))
      .toEqual({ kind: "adopt", resumeKill: true });
  });

  it("killing: the kill's state and reason, with or without a marker", () => {
    const killing = record({ state: "killing", killStartedAt: T0, killReason: "timed out: it ran past its timeout of 5 s", killState: "timed_out" });
    expect(decideReplay(killing, evidence())).toMatchObject({ state: "timed_out", exitCode: null, reason: expect.stringContaining("timed out") });
    expect(decideReplay(killing, evidence({ marker: code(143) }))).toMatchObject({ state: "timed_out", exitCode: 143 });
  });

  it("the host rebooted: says so", () => {
    const d = decideReplay(record(), evidence({ bootIdNow: "boot-b" }));
    expect(d).toMatchObject({ state: "lost", reason: expect.stringContaining("the host rebooted") });
  });

  it("shared the dead supervisor's cgroup, and that cgroup was killed or removed: killed with it, at the restart", () => {
    const shared = record({ placement: "process-group", location: { cgroup: "/daemon/module.service" } });
    for (const spawnerCgroup of [{ kind: "emptied" as const }, { kind: "removed" as const }]) {
      const d = decideReplay(shared, evidence({ spawnerCgroup }));
      expect(d).toMatchObject({ state: "lost", reason: expect.stringContaining("killed with the supervisor's cgroup when the supervisor restarted at 2026-11-30T10:04:00.000Z") });
    }
    expect(decideReplay(shared, evidence({ spawnerCgroup: { kind: "removed" } }))).toMatchObject({ reason: expect.stringContaining("that cgroup is gone") });
    // The same task while its supervisor still lives did not die with it.
    expect(decideReplay(shared, evidence({ spawnerAlive: true, spawnerCgroup: { kind: "emptied" } }))).toMatchObject({ reason: expect.stringContaining("ended without an exit code") });
  });

  it("shared the dead supervisor's cgroup, but nothing shows that cgroup was killed: a signal outlive did not send", () => {
    const shared = record({ placement: "process-group", location: { cgroup: "/daemon/module.service" } });
    const cases: Array<[ReplayEvidence["spawnerCgroup"], string]> = [
      [{ kind: "root" }, "it shared the root cgroup, which nothing kills"],
      [{ kind: "survivors", detail: "pid 17, older than the task, still runs there" }, "that cgroup was not killed (pid 17, older than the task, still runs there)"],
      [{ kind: "unknown", why: "no cgroup v2 mount to look in" }, "whether that cgroup was killed is unknown (no cgroup v2 mount to look in)"],
      [null, ""],
      [undefined, ""],
    ];
    for (const [spawnerCgroup, words] of cases) {
      const d = decideReplay(shared, evidence({ spawnerCgroup }));
      expect(d).toMatchObject({ state: "lost", reason: expect.stringContaining("ended without an exit code (no exit code: killed by a signal outlive did not send, such as SIGKILL)") });
      expect(d).not.toMatchObject({ reason: expect.stringContaining("killed with the supervisor's cgroup") });
      expect((d as { reason: string }).reason).toContain(words);
    }
  });

  it("a cgroup of its own never reads as killed with the supervisor's, whatever that cgroup shows", () => {
    const d = decideReplay(record(), evidence({ spawnerCgroup: { kind: "emptied" } }));
    expect(d).toMatchObject({ state: "lost", reason: expect.stringContaining("ended without an exit code") });
  });

  it("otherwise: ended without an exit code — never 'fate unknown' — with the last output time", () => {
    const d = decideReplay(record(), evidence());
    expect(d).toMatchObject({ state: "lost", reason: expect.stringContaining("ended without an exit code") });
    if (d.kind === "finish") {
      expect(d.reason).toContain("last output at 2026-11-30T10:03:00.000Z");
      expect(d.reason).not.toMatch(/fate unknown/i);
    }
  });

  it("pid reused: named, and never adopted", () => {
    const d = decideReplay(record(), evidence({ pid: "reused" }));
    expect(d).toMatchObject({ kind: "finish", state: "lost", reason: expect.stringContaining("pid reused") });
  });

  it("OOM kills and watchdog timeouts are named from their evidence", () => {
    expect(decideReplay(record(), evidence({ oomKills: 2 }))).toMatchObject({ state: "oom_killed", reason: expect.stringContaining("oom_kill 2") });
    expect(decideReplay(record(), evidence({ oomKills: 1, marker: code(137) }))).toMatchObject({ state: "oom_killed", exitCode: 137 });
    // The limit it ran into, where outlive set one.
    expect(decideReplay(record({ memoryMaxBytes: 64 * 1024 * 1024 }), evidence({ oomKills: 1, marker: code(137) }))).toMatchObject({
      state: "oom_killed",
      reason: "killed by the kernel's OOM killer (oom_kill 1 in memory.events; its cap: memory.max 64 MiB, no swap (memory.swap.max 0))",
    });
    expect(decideReplay(record({ memoryMaxBytes: 1000 }), evidence({ oomKills: 1 }))).toMatchObject({ reason: expect.stringContaining("its cap: memory.max 1000 bytes") });
    expect(decideReplay(record({ timeoutSeconds: 5, deadlineIsTimeout: true }), evidence({ timedOutAt: T0 }))).toMatchObject({ state: "timed_out", reason: expect.stringContaining("its timeout of 5 s") });
    expect(decideReplay(record(), evidence({ timedOutAt: "2026-11-30T10:01:00.000Z", marker: code(143) }))).toMatchObject({ state: "timed_out", exitCode: 143 });
  });

  it("a signal death after the deadline is the backstop's", () => {
    const late = record({ deadlineAt: "2026-11-30T10:01:00.000Z", timeoutSeconds: 60, deadlineIsTimeout: true });
    expect(decideReplay(late, evidence({ marker: code(143, "2026-11-30T10:01:30.000Z") }))).toMatchObject({ state: "timed_out", exitCode: 143 });
    expect(decideReplay(late, evidence({ marker: code(0, "2026-11-30T10:01:30.000Z") }))).toMatchObject({ state: "exited", exitCode: 0 });
  });

  it("a process that left its cgroup is neither adopted nor signalled", () => {
    expect(decideReplay(record(), evidence({ pid: "same-elsewhere" }))).toMatchObject({ state: "lost", reason: expect.stringContaining("left the task's cgroup") });
  });

  it("remnants in the cgroup after the wrapper died are ended", () => {
    expect(decideReplay(record(), evidence({ remnants: true }))).toMatchObject({ state: "lost", endRemnants: true });
  });

  it("what an exited task left running is said, and not ended: its exit code is its end", () => {
    expect(decideReplay(record(), evidence({ marker: code(4), remnants: true }))).toEqual({
      kind: "finish",
      state: "exited",
      exitCode: 4,
      reason: "exited with code 4; processes it started were still running in its process group or cgroup when it ended, and were left running",
      endRemnants: false,
      finishedAt: "2026-11-30T10:02:00.000Z",
      finishedAtSource: "exit-marker",
      endedAfter: null,
    });
  });
});
