import { describe, expect, it } from "vitest";
import type { TaskRecord, TaskState } from "../../lib/store/record/record.ts";
import { handleProblem, mcpResultOf, mcpStatusOf, mcpTaskOf } from "../../lib/mcp/task-status.ts";
import { OutliveTaskStore, TASKS_PAGE } from "../../lib/mcp/task-store.ts";

// The pure mapping from an outlive record to an MCP task and its result (lib/mcp/task-status.ts),
// with plain records, and the store's paging over a fake wire.
function record(state: TaskState, over: Partial<TaskRecord> = {}): TaskRecord {
  const ended = !["starting", "running", "killing"].includes(state);
  return {
    schemaVersion: 1, id: "t-1", key: null, generation: null, command: { argv: ["make"] }, cwd: "/", state, exitCode: null, reason: ended ? "some reason" : null,
    createdAt: "2026-12-01T10:00:00.000Z", startedAt: "2026-12-01T10:00:00.010Z", finishedAt: ended ? "2026-12-01T10:00:05.000Z" : null, lastOutputAt: null, outputTail: ended ? "last words\n" : null,
    timeoutSeconds: null, deadlineAt: "2026-12-02T10:00:00.000Z", deadlineIsTimeout: false, memoryMaxBytes: null, pid: 42, pgid: 42, startTime: "1", bootId: "b",
    incarnation: "i-1", supervisorCgroup: null, placement: "process-group", location: {}, killStartedAt: null, killReason: null, killState: null, acknowledgedAt: null,
    mcpTask: true, keepAfterEndMs: 60_000, ...over,
  } as TaskRecord;
}

describe("an outlive task as an MCP task", () => {
  it("maps every state as the issue says: live ones working, a clean exit completed, every other end completed with an error but lost and never_started, which failed", () => {
    const cases: Array<[TaskRecord, string, boolean, string]> = [
      [record("starting", { pid: null }), "working", false, "starting"],
      [record("running", { commandPid: 43 }), "working", false, "running (pid 43)"],
      [record("killing", { killReason: "killed by request" }), "working", false, "being killed: killed by request"],
      [record("exited", { exitCode: 0, reason: "exited with code 0" }), "completed", false, "exited with code 0"],
      [record("exited", { exitCode: 3, reason: "exited with code 3" }), "completed", true, "exited with code 3"],
      [record("timed_out", { exitCode: 143, reason: "timed out: it ran past its timeout of 1 s; exit code 143 after the signal" }), "completed", true, "timed out: it ran past its timeout of 1 s; exit code 143 after the signal"],
      [record("timed_out", { reason: "ended by its watchdog at its deadline" }), "completed", true, "timed out: ended by its watchdog at its deadline"],
      [record("oom_killed", { reason: "killed by the kernel's OOM killer (oom_kill 1)" }), "completed", true, "killed by the kernel's OOM killer (oom_kill 1)"],
      [record("killed", { exitCode: 143, reason: "killed by request; exit code 143 after the signal" }), "completed", true, "killed by request; exit code 143 after the signal"],
      [record("killed", { reason: "superseded by generation 3 (no exit code: it ended while being killed)" }), "completed", true, "killed: superseded by generation 3 (no exit code: it ended while being killed)"],
      [record("killed", { exitCode: 143, reason: "cancelled by request; exit code 143 after the signal", cancelledAt: "2026-12-01T10:00:04.000Z" }), "cancelled", true, "cancelled by request; exit code 143 after the signal"],
      [record("lost", { reason: "ended without an exit code (no exit code: killed by a signal outlive did not send, such as SIGKILL)" }), "failed", true, "lost: ended without an exit code (no exit code: killed by a signal outlive did not send, such as SIGKILL)"],
      [record("never_started", { pid: null, reason: "never started: the supervisor stopped while starting it, before its command ran" }), "failed", true, "never started: the supervisor stopped while starting it, before its command ran"],
    ];
    for (const [r, status, isError, statusMessage] of cases) expect(mcpStatusOf(r), `${r.state}: ${r.reason}`).toEqual({ status, isError, statusMessage });
  });

  it("says an exit code its reason does not name", () => {
    expect(mcpStatusOf(record("killed", { exitCode: 9, reason: "killed by request" })).statusMessage).toBe("killed by request; exit code 9");
  });

  it("is a Task whose id is the task's, whose TTL is its keepAfterEndMs, updated at its last change", () => {
    expect(mcpTaskOf(record("exited", { exitCode: 0, reason: "exited with code 0" }), 1000)).toEqual({
      taskId: "t-1", status: "completed", statusMessage: "exited with code 0", createdAt: "2026-12-01T10:00:00.000Z", lastUpdatedAt: "2026-12-01T10:00:05.000Z", ttl: 60_000, pollInterval: 1000,
    });
    expect(mcpTaskOf(record("killing", { killStartedAt: "2026-12-01T10:00:03.000Z" }), 1000).lastUpdatedAt).toBe("2026-12-01T10:00:03.000Z");
    expect(mcpTaskOf(record("running", { keepAfterEndMs: undefined }), 1000).ttl).toBeNull();
  });

  it("has as its result what get_task answers, an error unless it exited 0", () => {
    const failed = mcpResultOf(record("exited", { exitCode: 2, reason: "exited with code 2" }));
    expect(failed.isError).toBe(true);
    expect((failed.content[0] as { text: string }).text).toContain("Task t-1 is exited (exited with code 2)");
    expect((failed.content[0] as { text: string }).text).toContain("last words");
    expect(failed.structuredContent).toMatchObject({ task: { id: "t-1", exitCode: 2 } });
    expect(mcpResultOf(record("exited", { exitCode: 0, reason: "exited with code 0" })).isError).toBe(false);
  });

  it("is a handle while it is an MCP task whose TTL has not passed since its end, and says why not otherwise, naming it", () => {
    const end = Date.parse("2026-12-01T10:00:05.000Z");
    expect(handleProblem("t-1", record("running"), new Date(end + 10 * 86_400_000))).toBeNull();
    expect(handleProblem("t-1", record("exited"), new Date(end + 59_999))).toBeNull();
    expect(handleProblem("t-1", record("exited"), new Date(end + 60_000))).toMatch(/^Task not found: t-1 expired at 2026-12-01T10:01:05.000Z/);
    expect(handleProblem("t-1", record("exited", { mcpTask: undefined }), new Date(end))).toMatch(/t-1 is an outlive task that was not started as an MCP task/);
    expect(handleProblem("t-9", null, new Date(end))).toBe('Task not found: there is no task "t-9" in this storage');
  });
});

describe("tasks/list over a storage", () => {
  it("answers the MCP tasks that resolve, oldest first, a page at a time, and refuses a cursor it did not give", async () => {
    const base = Date.parse("2026-12-01T10:00:00.000Z");
    const records = Array.from({ length: TASKS_PAGE + 30 }, (_, i) => record("running", { id: `t-${String(i).padStart(4, "0")}`, createdAt: new Date(base + i * 1000).toISOString() }));
    // Not handles: a task that is not an MCP task, and one whose TTL ran out.
    records.push(record("running", { id: "plain", mcpTask: undefined }), record("exited", { id: "expired", finishedAt: "2026-12-01T09:00:00.000Z" }));
    const store = new OutliveTaskStore(async (method) => (method === "list" ? [...records].reverse() : null), () => new Date(base));
    const first = await store.listTasks();
    expect(first.tasks).toHaveLength(TASKS_PAGE);
    expect(first.tasks[0].taskId).toBe("t-0000");
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await store.listTasks(first.nextCursor);
    expect(second.tasks.map((t) => t.taskId)).toEqual(records.slice(TASKS_PAGE, TASKS_PAGE + 30).map((r) => r.id));
    expect(second.nextCursor).toBeUndefined();
    await expect(store.listTasks("not-a-cursor")).rejects.toThrow(/the cursor "not-a-cursor" is not one tasks\/list gave/);
  });
});
