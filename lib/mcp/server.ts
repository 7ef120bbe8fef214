// Deno reads the SDK's types from these paths: its package maps `./*` to `*.d.ts`, which for a
// `.js` subpath names `mcp.js.d.ts`; tsc finds `mcp.d.ts` anyway, Deno's check does not. Types only.
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp.d.ts"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { errorAnswer } from "./answers.ts";
import { TOOLS, type RpcCall, type ToolLimits } from "./tools.ts";

/** What a model is told about the server as a whole, once, at initialize. */
const INSTRUCTIONS = [
  "outlive runs commands as durable background tasks: they keep running when this server or your harness restarts, and a later server finds them by id.",
  "Every answer gives the task's state and the reason outlive recorded for it (exited with code N, killed, timed out, lost, ...): trust it over a guess.",
  "Start with run_task, poll with get_task or wait_task (bounded), read output with task_output, and call ack_task once you have used a result.",
].join(" ");

/**
 * An MCP server whose tools (tools.ts) each call the wire protocol through
 * `call` (a session of lib/session/session.ts). A tool's failure, whether the
 * supervisor refused the call or the input was bad, is a tool error naming
 * what was wrong, so the model can correct itself; it never ends the server.
 *
 * @example
 * ```ts
 * import { mcpServer } from "./server.ts";
 * const server = mcpServer(async () => [], { version: "0.1.0", limits: { waitDefaultSeconds: 30, waitMaxSeconds: 50, outputDefaultBytes: 16384, cwd: "/" } });
 * console.log(typeof server.connect); // "function"
 * ```
 */
export function mcpServer(call: RpcCall, options: { version: string; limits: ToolLimits }): McpServer {
  const server = new McpServer({ name: "outlive", title: "outlive: durable background tasks", version: options.version }, { instructions: INSTRUCTIONS });
  for (const tool of TOOLS) {
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.inputSchema, annotations: tool.annotations },
      async (args: Record<string, unknown>) => {
        try {
          return await tool.answer(call, args, options.limits);
        } catch (error) {
          return errorAnswer(tool.name, error);
        }
      },
    );
  }
  return server;
}
