// Deno reads the SDK's types from these paths: its package maps `./*` to `*.d.ts`, which for a
// `.js` subpath names `mcp.js.d.ts`; tsc finds `mcp.d.ts` anyway, Deno's check does not. Types only.
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp.d.ts"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/experimental/tasks/index.d.ts"
import type { CreateTaskRequestHandlerExtra, TaskRequestHandlerExtra } from "@modelcontextprotocol/sdk/experimental/tasks";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/types.d.ts"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { errorAnswer } from "./answers.ts";
import { type CreationFailures, steerTaskToolCalls, taskTtl } from "./task-call.ts";
import { OutliveTaskStore } from "./task-store.ts";
import { runSpecOf, TOOLS, type RpcCall, type ToolDefinition, type ToolLimits } from "./tools.ts";

/** What a model is told about the server as a whole, once, at initialize. */
const INSTRUCTIONS = [
  "outlive runs commands as durable background tasks: they keep running when this server or your harness restarts, and a later server finds them by id.",
  "Every answer gives the task's state and the reason outlive recorded for it (exited with code N, killed, timed out, lost, ...): trust it over a guess.",
  "Start with run_task, poll with get_task or wait_task (bounded), read output with task_output, and call ack_task once you have used a result.",
].join(" ");

/** The key of a CreateTaskResult's `_meta` whose text a host may hand the model at once while the task runs (protocol 2025-11-25). */
const IMMEDIATE_RESPONSE = "io.modelcontextprotocol/model-immediate-response";

/**
 * An MCP server whose tools (tools.ts) each call the wire protocol through
 * `call` (a session of lib/session/session.ts). A tool's failure, whether the
 * supervisor refused the call or the input was bad, is a tool error naming
 * what was wrong, so the model can correct itself; it never ends the server.
 * run_task may also be called as an MCP task (the tasks utility of protocol
 * 2025-11-25, through the SDK's experimental registerToolTask), whose store
 * (task-store.ts) is outlive's storage on the same `call`.
 *
 * @example
 * ```ts
 * import { mcpServer } from "./server.ts";
 * const server = mcpServer(async () => [], { version: "0.1.0", limits: { waitDefaultSeconds: 30, waitMaxSeconds: 50, outputDefaultBytes: 16384, cwd: "/" } });
 * console.log(typeof server.connect); // "function"
 * ```
 */
export function mcpServer(call: RpcCall, options: { version: string; limits: ToolLimits }): McpServer {
  const server = new McpServer(
    { name: "outlive", title: "outlive: durable background tasks", version: options.version },
    {
      instructions: INSTRUCTIONS,
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore: new OutliveTaskStore(call),
    },
  );
  const answer = (tool: ToolDefinition) => async (args: Record<string, unknown>): Promise<CallToolResult> => {
    try {
      return await tool.answer(call, args, options.limits);
    } catch (error) {
      return errorAnswer(tool.name, error);
    }
  };
  const failures: CreationFailures = new Map();
  // Before any registration: the McpServer sets its tools/call handler at the first one.
  const taskTools = TOOLS.filter((t) => t.taskSupport !== undefined);
  steerTaskToolCalls(server, taskTools.map((t) => ({ name: t.name, inputSchema: t.inputSchema, plain: answer(t) })), failures);
  for (const tool of TOOLS) {
    const config = { title: tool.title, description: tool.description, inputSchema: tool.inputSchema, annotations: tool.annotations };
    if (tool.taskSupport === undefined) {
      server.registerTool(tool.name, config, answer(tool));
      continue;
    }
    server.experimental.tasks.registerToolTask(tool.name, { ...config, execution: { taskSupport: tool.taskSupport } }, {
      async createTask(args: Record<string, unknown>, extra: CreateTaskRequestHandlerExtra) {
        try {
          const task = await extra.taskStore.createTask({ ttl: taskTtl(extra.taskRequestedTtl), context: { spec: runSpecOf(args, options.limits) } });
          const said = `Started task ${task.taskId} as an MCP task (${task.statusMessage}); poll it with tasks/get, or get_task and wait_task, and call ack_task once you have used its result.`;
          return { task, _meta: { [IMMEDIATE_RESPONSE]: said } };
        } catch (error) {
          // Said by the steering (task-call.ts) as a JSON-RPC error: the SDK keeps only a message.
          failures.set(extra.requestId, error);
          throw error;
        }
      },
      getTask: (_args: unknown, extra: TaskRequestHandlerExtra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: async (_args: unknown, extra: TaskRequestHandlerExtra) => (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
    });
  }
  return server;
}
