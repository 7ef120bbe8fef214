// Deno reads the SDK's types from these paths: its package maps `./*` to `*.d.ts`, which for a
// `.js` subpath names `mcp.js.d.ts`; tsc finds `mcp.d.ts` anyway, Deno's check does not. Types only.
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/experimental/tasks/index.d.ts"
import type { CreateTaskOptions, TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/types.d.ts"
import { ErrorCode, McpError, type Result, type Task } from "@modelcontextprotocol/sdk/types.js";
import { OutliveError } from "../errors.ts";
import { isTerminal, type TaskRecord } from "../store/record/record.ts";
import { handleProblem, mcpResultOf, mcpTaskOf } from "./task-status.ts";
import type { RpcCall } from "./tools.ts";

/** How often a client is told to poll a task (`pollInterval`), and how often the SDK's `tasks/result` looks while it blocks. */
export const TASK_POLL_INTERVAL_MS = 1000;

/** The most tasks one `tasks/list` answers; `nextCursor` leads to the rest. */
export const TASKS_PAGE = 100;

/** What the run_task tool hands the store to start: the wire's run spec, checked by the tool's schema. */
export interface RunContext {
  spec: Record<string, unknown>;
}

/**
 * The SDK's TaskStore (its experimental tasks API) over outlive's storage,
 * through the same wire `call` as the tools (a session of
 * lib/session/session.ts), so it works whether this server holds the
 * storage or is a client of its holder. An MCP task is an outlive task
 * started with `mcpTask` and its TTL as `keepAfterEndMs`; its taskId is the
 * task's id. Nothing is kept in memory: a task created through one server
 * is answered by any later one on the same storage, after the first was
 * SIGKILLed, from the record on disk. A task is not bound to the MCP
 * session that created it (the SDK's sessionId is ignored): the storage is
 * its owner's, and the handle must outlive the session and the process.
 *
 * @example
 * ```ts
 * import { OutliveTaskStore } from "./task-store.ts";
 * const store = new OutliveTaskStore(async () => { throw Object.assign(new Error("No task"), { code: "E_NO_TASK" }); });
 * await store.getTask("t-1").catch((e) => console.log(e.code, e.message));
 * // -32602 'MCP error -32602: Task not found: there is no task "t-1" in this storage'
 * ```
 */
export class OutliveTaskStore implements TaskStore {
  constructor(private readonly call: RpcCall, private readonly now: () => Date = () => new Date()) {}

  /** Starts the outlive task: the run spec comes from the tool (`context.spec`), the TTL (`ttl`, checked at the door) becomes its floor. */
  async createTask(params: CreateTaskOptions): Promise<Task> {
    const spec = (params.context as RunContext | undefined)?.spec;
    if (spec === undefined) throw new OutliveError("E_BAD_OPTION", "an MCP task of outlive is a run_task call; nothing else creates one");
    const ttl = params.ttl ?? undefined;
    const record = (await this.call("run", { ...spec, mcpTask: true, ...(ttl === undefined ? {} : { keepAfterEndMs: ttl }) })) as TaskRecord;
    return mcpTaskOf(record, TASK_POLL_INTERVAL_MS);
  }

  /**
   * The task as its record says now. An unknown or expired handle throws
   * -32602 naming it (the SDK's own answer to a null would not name it).
   */
  async getTask(taskId: string): Promise<Task> {
    return mcpTaskOf(await this.handle(taskId), TASK_POLL_INTERVAL_MS);
  }

  /** Never asked of this store: a task's result is its record, which its own end writes. */
  async storeTaskResult(taskId: string): Promise<void> {
    throw new McpError(ErrorCode.InternalError, `the result of MCP task ${taskId} is its outlive record, written by the task's end; it cannot be stored`);
  }

  /** The result of an ended task, as often as asked; it acknowledges nothing (ack_task does). */
  async getTaskResult(taskId: string): Promise<Result> {
    const record = await this.handle(taskId);
    if (!isTerminal(record.state)) throw new McpError(ErrorCode.InvalidParams, `MCP task ${taskId} is ${record.state}: it has no result yet`);
    return mcpResultOf(record);
  }

  /**
   * `cancelled` is the task's own cancel: the kill ladder (TERM, the grace,
   * KILL, the cgroup) with the record saying who asked, so any later server
   * tells it from another kill. Nothing else changes a task's status from
   * outside: its process does.
   */
  async updateTaskStatus(taskId: string, status: Task["status"]): Promise<void> {
    if (status !== "cancelled") {
      throw new McpError(ErrorCode.InvalidParams, `MCP task ${taskId}: only a cancel changes an outlive task's status from outside, not ${JSON.stringify(status)}`);
    }
    await this.handle(taskId);
    await this.call("kill", { id: taskId, cancel: true });
  }

  /** The MCP tasks whose handles still resolve, oldest first, a page at a time. */
  async listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const after = cursor === undefined ? null : readCursor(cursor);
    const now = this.now();
    const records = ((await this.call("list", {})) as TaskRecord[])
      .filter((r) => handleProblem(r.id, r, now) === null)
      .sort(byCreation);
    const from = after === null ? 0 : records.findIndex((r) => byCreation(r, after) > 0);
    const page = from < 0 ? [] : records.slice(from, from + TASKS_PAGE);
    const more = from >= 0 && from + TASKS_PAGE < records.length;
    const last = page[page.length - 1];
    return { tasks: page.map((r) => mcpTaskOf(r, TASK_POLL_INTERVAL_MS)), ...(more ? { nextCursor: writeCursor(last) } : {}) };
  }

  /** The record of an MCP task whose handle resolves now; else -32602 saying why, naming the id. */
  private async handle(taskId: string): Promise<TaskRecord> {
    let record: TaskRecord | null;
    try {
      record = (await this.call("get", { id: taskId })) as TaskRecord;
    } catch (error) {
      const code = outliveCode(error);
      if (code === "E_NO_TASK") record = null;
      else if (code === "E_BAD_ID" || code === "E_BAD_OPTION") throw new McpError(ErrorCode.InvalidParams, `Task not found: ${(error as Error).message}`);
      else throw error;
    }
    const problem = handleProblem(taskId, record, this.now());
    if (problem !== null) throw new McpError(ErrorCode.InvalidParams, problem);
    return record!;
  }
}

/** outlive's code of an error from `call`: an OutliveError's own, or the wire error's `data.code`. */
export function outliveCode(error: unknown): string | undefined {
  const data = (error as { data?: { code?: unknown } } | null)?.data;
  if (typeof data?.code === "string") return data.code;
  const own = (error as { code?: unknown } | null)?.code;
  return typeof own === "string" ? own : undefined;
}

/** Tasks in the order they were created (ids break a tie), which is the order `list` gives and a cursor continues. */
function byCreation(a: Pick<TaskRecord, "createdAt" | "id">, b: Pick<TaskRecord, "createdAt" | "id">): number {
  return Date.parse(a.createdAt) - Date.parse(b.createdAt) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** A cursor names the last task of a page by its place in that order, so a task removed meanwhile does not break it. */
function writeCursor(r: Pick<TaskRecord, "createdAt" | "id">): string {
  return Buffer.from(JSON.stringify([r.createdAt, r.id])).toString("base64url");
}

function readCursor(cursor: string): Pick<TaskRecord, "createdAt" | "id"> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    value = null;
  }
  if (!Array.isArray(value) || value.length !== 2 || typeof value[1] !== "string" || typeof value[0] !== "string" || Number.isNaN(Date.parse(value[0]))) {
    throw new Error(`the cursor ${JSON.stringify(cursor)} is not one tasks/list gave (pass the nextCursor of its last answer, or none)`);
  }
  return { createdAt: value[0], id: value[1] };
}
