// Deno reads the SDK's types from these paths: its package maps `./*` to `*.d.ts`, which for a
// `.js` subpath names `mcp.js.d.ts`; tsc finds `mcp.d.ts` anyway, Deno's check does not. Types only.
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp.d.ts"
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/types.d.ts"
import { CallToolRequestSchema, type CallToolResult, ErrorCode, McpError, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { describeValue } from "../errors.ts";
import { outliveCode } from "./task-store.ts";

/** An MCP task's TTL when the client asks for none: a day after the task's end. */
export const DEFAULT_TASK_TTL_MS = 86_400_000;
/** The longest TTL granted: a longer one asked for is cut to this (the protocol lets a server lower it, and says the TTL it took). */
export const MAX_TASK_TTL_MS = 30 * 86_400_000;

/**
 * The TTL a task-augmented call gets: what it asked for, at most
 * MAX_TASK_TTL_MS, else DEFAULT_TASK_TTL_MS. Anything but a whole number of
 * milliseconds above 0 is refused with -32602 naming `task.ttl`. Pure.
 *
 * @example
 * ```ts
 * import { taskTtl } from "./task-call.ts";
 * console.log(taskTtl(60_000), taskTtl(undefined)); // 60000 86400000
 * try { taskTtl(-5); } catch (e) { console.log((e as Error).message); }
 * // "MCP error -32602: Expected task.ttl to be a whole number of milliseconds above 0, got `-5` (number)"
 * ```
 */
export function taskTtl(requested: unknown): number {
  if (requested === undefined) return DEFAULT_TASK_TTL_MS;
  if (!Number.isSafeInteger(requested) || (requested as number) <= 0) {
    throw new McpError(ErrorCode.InvalidParams, `Expected task.ttl to be a whole number of milliseconds above 0, got ${describeValue(requested)}`);
  }
  return Math.min(requested as number, MAX_TASK_TTL_MS);
}

/** Why a task-augmented call made no task, kept by request id between the tool's createTask and the steering below. */
export type CreationFailures = Map<RequestId, unknown>;

/** outlive's codes that mean the call's arguments were wrong (-32602); any other failure to start is the server's (-32603). */
const BAD_INPUT = new Set(["E_BAD_OPTION", "E_BAD_ID", "E_NOT_FOUND", "E_NOT_EXECUTABLE", "E_MEMORY_CAP_UNSUPPORTED", "E_NOT_PTY"]);

export interface SteeredTool {
  name: string;
  inputSchema: z.ZodRawShape;
  /** The tool's plain answer (no task): run_task starts the task and answers at once, as it always has. */
  plain(args: Record<string, unknown>): Promise<CallToolResult>;
}

/**
 * Steers `tools/call` of a task tool around two things the SDK's McpServer
 * (1.32.2) does that outlive must not: a plain call of a tool with
 * `taskSupport: "optional"` is polled by the server until the task ends
 * (for run_task, a build or a dev server: longer than any client waits),
 * so it is answered here at once instead; and a task-augmented call that
 * makes no task comes back as a tool error, which the SDK's own result
 * check then refuses as "Invalid task creation result" without the reason,
 * so it becomes a JSON-RPC error that says why (a bad `task.ttl` is
 * refused before anything starts). The McpServer's handler does all else.
 * Must be called before any tool is registered: the McpServer sets its
 * `tools/call` handler at the first registration, and this wraps it as it
 * is set.
 */
export function steerTaskToolCalls(server: McpServer, tools: readonly SteeredTool[], failures: CreationFailures): void {
  const inner = server.server;
  const set = inner.setRequestHandler.bind(inner) as (schema: unknown, handler: Handler) => void;
  (inner as { setRequestHandler: unknown }).setRequestHandler = (schema: unknown, handler: Handler) =>
    set(schema, schema === CallToolRequestSchema ? steer(handler, tools, failures) : handler);
}

type Handler = (request: { params?: Record<string, unknown> }, extra: { requestId: RequestId }) => Promise<Record<string, unknown>>;

function steer(handler: Handler, tools: readonly SteeredTool[], failures: CreationFailures): Handler {
  const inputs = new Map(tools.map((t) => [t.name, { tool: t, input: z.object(t.inputSchema) }]));
  return async (request, extra) => {
    const params = request.params ?? {};
    const steered = typeof params.name === "string" ? inputs.get(params.name) : undefined;
    if (steered === undefined) return handler(request, extra);
    const { tool, input } = steered;
    if (params.task === undefined) {
      const args = input.safeParse(params.arguments ?? {});
      if (!args.success) return inputError(tool.name, args.error) as Record<string, unknown>;
      return (await tool.plain(args.data)) as Record<string, unknown>;
    }
    taskTtl((params.task as { ttl?: unknown }).ttl);
    failures.delete(extra.requestId);
    const result = await handler(request, extra);
    if ("task" in result) return result;
    const failure = failures.get(extra.requestId);
    failures.delete(extra.requestId);
    throw creationError(tool.name, failure, result as CallToolResult);
  };
}

/** A plain call whose arguments the tool's schema refuses: the tool error the SDK itself answers then. */
function inputError(name: string, error: z.ZodError): CallToolResult {
  const issues = error.issues.map((i) => `${i.path.length > 0 ? i.path.join(".") : "arguments"}: ${i.message}`).join("; ");
  return { content: [{ type: "text", text: `Input validation error: Invalid arguments for tool ${name}: ${issues}` }], isError: true };
}

/** The JSON-RPC error for a task-augmented call that made no task: the run's refusal with outlive's code, or the input check's words. */
function creationError(name: string, failure: unknown, result: CallToolResult): McpError {
  if (failure === undefined) {
    // The SDK's input check said it as an McpError, whose message already carries its code: said once.
    const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n").replace(/^(MCP error -?\d+: )+/, "");
    return new McpError(ErrorCode.InvalidParams, text || `${name} made no task`);
  }
  const code = outliveCode(failure);
  const message = failure instanceof Error ? failure.message : String(failure);
  const bad = code !== undefined && BAD_INPUT.has(code);
  return new McpError(bad ? ErrorCode.InvalidParams : ErrorCode.InternalError, `${name} failed: ${message}${code === undefined ? "" : ` [${code}]`}`, code === undefined ? undefined : { code });
}
