// Deno reads the SDK's types from these paths: its package maps `./*` to `*.d.ts`, which for a
// `.js` subpath names `mcp.js.d.ts`; tsc finds `mcp.d.ts` anyway, Deno's check does not. Types only.
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/types.d.ts"
import type { CallToolResult, Task } from "@modelcontextprotocol/sdk/types.js";
import { keptUntil } from "../retention/keep-floor.ts";
import { isTerminal, type TaskRecord, type TaskState } from "../store/record/record.ts";
import { taskAnswer } from "./answers.ts";

/**
 * An outlive task seen as an MCP task (the tasks utility of protocol
 * 2025-11-25): its status, the words for it, and its result. The MCP task
 * is the outlive task; its record is the whole truth, so a server that
 * never saw the task answers for it as the one that started it. Pure:
 * records in, MCP objects out.
 */

/** How an outlive task stands in MCP's words. */
export interface McpStatus {
  status: Task["status"];
  /** What outlive knows, in words: the record's reason once it ended. */
  statusMessage: string;
  /** Whether its result is a tool error (`isError`): every end but an exit with code 0. */
  isError: boolean;
}

/** What each terminal state is called when a reason does not already begin with it. */
const STATE_WORDS: Record<TaskState, string> = {
  starting: "starting",
  running: "running",
  killing: "being killed",
  exited: "exited",
  killed: "killed",
  timed_out: "timed out",
  oom_killed: "killed by the OOM killer",
  lost: "lost",
  never_started: "never started",
};

/**
 * The MCP status of an outlive task: `starting`, `running`, `killing` are
 * `working`; an exit with code 0 is `completed`; any other exit, a timeout,
 * the OOM killer and a kill by anyone but the task's own cancel are
 * `completed` with a tool error saying so; a kill by its own cancel
 * (`cancelledAt`) is `cancelled`; `lost` and `never_started` are `failed`.
 *
 * @example
 * ```ts
 * import { mcpStatusOf } from "./task-status.ts";
 * console.log(mcpStatusOf({ state: "exited", exitCode: 3, reason: "exited with code 3" } as never));
 * // { status: "completed", statusMessage: "exited with code 3", isError: true }
 * console.log(mcpStatusOf({ state: "killed", exitCode: null, reason: "cancelled by request", cancelledAt: "2026-12-01T00:00:00.000Z" } as never).status); // "cancelled"
 * ```
 */
export function mcpStatusOf(r: TaskRecord): McpStatus {
  switch (r.state) {
    case "starting":
      return { status: "working", statusMessage: "starting", isError: false };
    case "running":
      return { status: "working", statusMessage: r.pid === null ? "running" : `running (pid ${r.commandPid ?? r.pid})`, isError: false };
    case "killing":
      return { status: "working", statusMessage: `being killed: ${r.killReason ?? "killed by outlive"}`, isError: false };
    case "exited":
      return { status: "completed", statusMessage: endWords(r), isError: r.exitCode !== 0 };
    case "killed":
      // Only the task's own cancel is `cancelled`; a kill by anyone else is an end the result reports.
      return r.cancelledAt === undefined
        ? { status: "completed", statusMessage: endWords(r), isError: true }
        : { status: "cancelled", statusMessage: endWords(r, "cancelled"), isError: true };
    case "timed_out":
    case "oom_killed":
      return { status: "completed", statusMessage: endWords(r), isError: true };
    case "lost":
    case "never_started":
      return { status: "failed", statusMessage: endWords(r), isError: true };
  }
}

/** The record's reason, led by its state's words unless it begins with them, and its exit code unless it names it. */
function endWords(r: TaskRecord, word = STATE_WORDS[r.state]): string {
  const reason = r.reason ?? "no reason recorded";
  const led = reason.toLowerCase().startsWith(word.split(" ")[0]) ? reason : `${word}: ${reason}`;
  return r.exitCode === null || led.includes(`code ${r.exitCode}`) ? led : `${led}; exit code ${r.exitCode}`;
}

/**
 * The MCP Task of an outlive task: its id is the handle, its TTL the
 * record's `keepAfterEndMs` (null: kept until removed), counted from its
 * end rather than its creation, so a long task's result is never gone
 * before it is there.
 *
 * @example
 * ```ts
 * import { mcpTaskOf } from "./task-status.ts";
 * const r = { id: "t-1", state: "running", pid: 42, createdAt: "2026-12-01T00:00:00.000Z", startedAt: "2026-12-01T00:00:00.010Z", finishedAt: null, killStartedAt: null, keepAfterEndMs: 60000 };
 * console.log(mcpTaskOf(r as never, 1000));
 * // { taskId: "t-1", status: "working", statusMessage: "running (pid 42)", createdAt: "2026-12-01T00:00:00.000Z", lastUpdatedAt: "2026-12-01T00:00:00.010Z", ttl: 60000, pollInterval: 1000 }
 * ```
 */
export function mcpTaskOf(r: TaskRecord, pollIntervalMs: number): Task {
  const { status, statusMessage } = mcpStatusOf(r);
  return {
    taskId: r.id,
    status,
    statusMessage,
    createdAt: r.createdAt,
    lastUpdatedAt: lastChange(r),
    ttl: r.keepAfterEndMs ?? null,
    pollInterval: pollIntervalMs,
  };
}

/** The latest of the moments the task's state changed at: creation, start, the kill's start, the end. */
function lastChange(r: TaskRecord): string {
  const times = [r.createdAt, r.startedAt, r.killStartedAt, r.finishedAt].filter((t): t is string => t !== null);
  return times.reduce((a, b) => (Date.parse(b) > Date.parse(a) ? b : a));
}

/**
 * What `tasks/result` answers for a task that has ended: what `get_task`
 * answers (its state, reason, exit code and last output in words, and the
 * record as `structuredContent`), a tool error unless it exited with
 * code 0. The same every time it is asked: reading it acknowledges nothing.
 *
 * @example
 * ```ts
 * import { mcpResultOf } from "./task-status.ts";
 * const r = { id: "t-1", key: null, command: { argv: ["false"] }, state: "exited", exitCode: 1, reason: "exited with code 1", finishedAt: "2026-12-01T00:00:01.000Z", acknowledgedAt: null, outputTail: "" };
 * const result = mcpResultOf(r as never);
 * console.log(result.isError, (result.content[0] as { text: string }).text.split("\n")[0]); // true 'Task t-1 is exited (exited with code 1): ["false"].'
 * ```
 */
export function mcpResultOf(r: TaskRecord): CallToolResult {
  return { ...taskAnswer(r), isError: mcpStatusOf(r).isError };
}

/**
 * Why `id` is not an MCP task handle (null: it is one): no record, a task
 * that was not started as an MCP task, or one whose TTL has run out since
 * its end. Each answer names the id, for the -32602 the client reads.
 *
 * @example
 * ```ts
 * import { handleProblem } from "./task-status.ts";
 * const r = { id: "t-1", state: "exited", mcpTask: true, createdAt: "2026-12-01T00:00:00.000Z", finishedAt: "2026-12-01T00:00:01.000Z", keepAfterEndMs: 1000 };
 * console.log(handleProblem("t-1", r as never, new Date("2026-12-01T00:00:01.500Z"))); // null
 * console.log(handleProblem("t-1", r as never, new Date("2026-12-01T00:00:03Z")));
 * // "Task not found: t-1 expired at 2026-12-01T00:00:02.000Z (its TTL of 1000 ms after its end at 2026-12-01T00:00:01.000Z has passed)"
 * ```
 */
export function handleProblem(id: string, r: TaskRecord | null, now: Date): string | null {
  if (r === null) return `Task not found: there is no task ${JSON.stringify(id)} in this storage`;
  if (r.mcpTask !== true) return `Task not found: ${id} is an outlive task that was not started as an MCP task (a task-augmented tools/call of run_task); read it with get_task`;
  const until = isTerminal(r.state) ? keptUntil(r) : null;
  if (until !== null && now.getTime() >= until) {
    return `Task not found: ${id} expired at ${new Date(until).toISOString()} (its TTL of ${r.keepAfterEndMs} ms after its end at ${r.finishedAt ?? r.createdAt} has passed)`;
  }
  return null;
}
