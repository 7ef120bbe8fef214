// lib/mcp on Deno 2: a real session on a temp storage, the tools behind the HTTP door with a
// token file made here, and the SDK's own client over Streamable HTTP, all in this Deno process.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
// Deno reads the SDK's types from these paths (its `./*` export names `index.js.d.ts`). Types only.
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.d.ts"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.d.ts"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/types.d.ts"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { openHttpDoor } from "../../lib/mcp/http-door.ts";
import { mcpServer } from "../../lib/mcp/server.ts";
import { loadToken } from "../../lib/mcp/token-file.ts";
import { openSession } from "../../lib/session/session.ts";

Deno.test("outlive mcp's tools behind the HTTP door, on Deno", async () => {
  const dir = mkdtempSync(join(tmpdir(), "outlive-mcp-deno-"));
  const storage = join(dir, "storage");
  const session = await openSession({ supervisor: { storage, mode: "standalone", log: () => {} }, notify: async () => true });
  try {
    await session.call("initialize", { protocolVersion: "1", clientInfo: { name: "deno test" } });
    const tokenFile = join(dir, "token");
    const { token, made } = loadToken(tokenFile);
    assert.equal(made, true);
    assert.equal(statSync(tokenFile).mode & 0o777, 0o600);
    const limits = { waitDefaultSeconds: 30, waitMaxSeconds: 50, outputDefaultBytes: 16384, cwd: dir };
    const door = await openHttpDoor({ address: { host: "127.0.0.1", port: 0 }, token, newServer: () => mcpServer((m, p) => session.call(m, p), { version: "0", limits }) });
    try {
      const client = new Client({ name: "deno", version: "0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(door.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
      const run = await client.callTool({ name: "run_task", arguments: { shell: "echo on-deno; exit 4" } });
      const id = (run.structuredContent as { task: { id: string } }).task.id;
      const waited = await client.callTool({ name: "wait_task", arguments: { id } });
      const task = (waited.structuredContent as { task: { state: string; exitCode: number; reason: string } }).task;
      assert.deepEqual([task.state, task.exitCode, task.reason], ["exited", 4, "exited with code 4"]);
      const output = await client.callTool({ name: "task_output", arguments: { id } });
      assert.equal((output.structuredContent as { text: string }).text, "on-deno\n");
      // run_task as an MCP task: its taskId is the task's id, its result the task's end.
      const seen: string[] = [];
      let ended: { isError?: boolean; structuredContent?: unknown } | undefined;
      for await (const m of client.experimental.tasks.callToolStream({ name: "run_task", arguments: { shell: "exit 5" } }, CallToolResultSchema, { task: { ttl: 60_000 } })) {
        seen.push(m.type);
        if (m.type === "result") ended = m.result;
      }
      assert.equal(seen[0], "taskCreated");
      assert.equal(ended?.isError, true);
      assert.equal((ended?.structuredContent as { task: { exitCode: number } }).task.exitCode, 5);
      await client.close();

      const rebound = await fetch(door.url, { method: "POST", headers: { Origin: "http://evil.example.com", Authorization: `Bearer ${token}`, "Content-Type": "application/json" }, body: "{}" });
      assert.equal(rebound.status, 403);
      await rebound.body?.cancel();
      const anonymous = await fetch(door.url, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
      assert.equal(anonymous.status, 401);
      await anonymous.body?.cancel();
    } finally {
      await door.close();
    }
  } finally {
    await session.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
