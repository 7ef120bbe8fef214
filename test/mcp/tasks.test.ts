import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CreateTaskResultSchema } from "@modelcontextprotocol/sdk/experimental/tasks";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect, it } from "vitest";
import { waitUntil } from "../../lib/kill/process-group.ts";
import { MAX_TASK_TTL_MS } from "../../lib/mcp/task-call.ts";
import { outliveCli, tempDir } from "../support/cli.ts";
import { ServeChild } from "../support/serve-child.ts";
import { waitFor } from "../support/wait.ts";
import { callTool, gone, httpClient, httpServer, stdioClient } from "./support/servers.ts";

// Durable MCP tasks (the tasks utility of protocol 2025-11-25), driven by the SDK's own client
// (client.experimental.tasks) against real outlive mcp processes: a task created through one
// server is answered by the next after the first was SIGKILLed, with its real end and exit code,
// and outlive's own completion of it is delivered exactly once.
const temp = tempDir("outlive-mcp-tasks-");
const storage = join(temp.dir, "storage");
const serves: ServeChild[] = [];
afterAll(async () => {
  for (const s of serves) if (s.child.exitCode === null && s.child.signalCode === null) await s.kill();
  outliveCli(["stop-all", "--storage", storage]);
  temp.remove();
});

/** A task-augmented call of run_task through the SDK's callToolStream: the task it made, read from the stream's first message. */
async function startTask(client: Client, args: Record<string, unknown>, ttl?: number): Promise<{ taskId: string; status: string; ttl: number | null }> {
  const stream = client.experimental.tasks.callToolStream({ name: "run_task", arguments: args }, CallToolResultSchema, { task: ttl === undefined ? {} : { ttl } });
  for await (const message of stream) {
    if (message.type === "taskCreated") return message.task;
    throw new Error(`expected taskCreated first, got ${JSON.stringify(message)}`);
  }
  throw new Error("the stream ended without a message");
}

/** A raw task-augmented tools/call: the CreateTaskResult, or the JSON-RPC error the server answered. */
function rawTaskCall(client: Client, args: Record<string, unknown>, task: Record<string, unknown>) {
  return client.request({ method: "tools/call", params: { name: "run_task", arguments: args, task } }, CreateTaskResultSchema);
}

function text(result: { content?: unknown }): string {
  return ((result.content ?? []) as CallToolResult["content"]).map((c) => (c.type === "text" ? c.text : "")).join("\n");
}

/** The server is SIGKILLed, as a harness's end would take it; resolves once it is gone. */
async function sigkill(server: { pid: number; close(): Promise<void> }): Promise<void> {
  process.kill(server.pid, "SIGKILL");
  expect(await waitUntil(() => gone(server.pid), 10_000)).toBe(true);
  await server.close().catch(() => {});
}

/** The task's record as get_task answers it (the server's, which its disk catches up with). */
async function recordOf(client: Client, id: string): Promise<Record<string, any>> {
  const got = await callTool(client, "get_task", { id });
  expect(got.isError, got.text).toBe(false);
  return got.data.task;
}

describe("durable MCP tasks: run_task as a task", () => {
  it("a task created through one server is answered by the next after the first was SIGKILLed, with its real end and exit code, and its completion is delivered exactly once", async () => {
    const first = await stdioClient(storage);
    const created = await startTask(first.client, { shell: "sleep 2; echo done-after-restart; exit 7", key: "mcp-build" }, 600_000);
    expect(created).toMatchObject({ status: "working", ttl: 600_000 });
    const id = created.taskId;
    // The MCP task is the outlive task: its taskId is the task's id.
    const record = await recordOf(first.client, id);
    expect(record).toMatchObject({ id, key: "mcp-build", mcpTask: true, keepAfterEndMs: 600_000 });
    await sigkill(first);
    expect(gone(record.pid)).toBe(false);

    const next = await stdioClient(storage);
    const subscriber = new ServeChild(["--stdio", "--storage", storage, "--mode", "standalone"]);
    serves.push(subscriber);
    try {
      const seen = await next.client.experimental.tasks.getTask(id);
      expect(seen).toMatchObject({ taskId: id, ttl: 600_000, pollInterval: expect.any(Number) });
      expect(["working", "completed"]).toContain(seen.status);
      expect((await next.client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).toContain(id);

      // tasks/result blocks until the end, then tells it: the exit code and the output, a tool error (it exited 7).
      const result = await next.client.experimental.tasks.getTaskResult(id, CallToolResultSchema);
      expect(result.isError).toBe(true);
      expect(text(result)).toContain(`Task ${id} is exited (exited with code 7)`);
      expect(text(result)).toContain("done-after-restart");
      expect(result.structuredContent).toMatchObject({ task: { id, state: "exited", exitCode: 7, reason: "exited with code 7", acknowledgedAt: null } });
      expect(result._meta?.["io.modelcontextprotocol/related-task"]).toEqual({ taskId: id });
      const ended = await next.client.experimental.tasks.getTask(id);
      expect(ended).toMatchObject({ taskId: id, status: "completed", statusMessage: "exited with code 7", ttl: 600_000 });

      // Read again, the same; reading acknowledged nothing.
      const again = await next.client.experimental.tasks.getTaskResult(id, CallToolResultSchema);
      expect(text(again)).toBe(text(result));
      expect((await callTool(next.client, "get_task", { id })).data.task.acknowledgedAt).toBeNull();

      // outlive's own completion feed, through another server (a client of the holder over the control socket).
      await subscriber.initialize();
      await subscriber.request("completions/subscribe", {});
      const completions = (taskId: string) => subscriber.notifications("completion").filter((c) => c.id === taskId);
      await subscriber.until(() => completions(id).length > 0);
      expect(completions(id)[0]).toMatchObject({ state: "exited", exitCode: 7 });
      // A later completion passes through the same feed: the first one was not sent again before it.
      const marker = (await callTool(next.client, "run_task", { argv: ["true"] })).data.task.id as string;
      await subscriber.until(() => completions(marker).length > 0);
      expect(completions(id)).toHaveLength(1);

      // ack_task acknowledges it; a new subscription then delivers the marker (not acknowledged) but never it.
      expect((await callTool(next.client, "ack_task", { id })).data.task.acknowledgedAt).toEqual(expect.any(String));
      await subscriber.request("completions/unsubscribe", {});
      await subscriber.request("completions/subscribe", {});
      await subscriber.until(() => completions(marker).length > 1);
      expect(completions(id)).toHaveLength(1);
      // Acknowledged, the handle still resolves within its TTL.
      expect((await next.client.experimental.tasks.getTask(id)).status).toBe("completed");
    } finally {
      await subscriber.close();
      await next.close();
    }
  });

  it("tasks/cancel after the creating server was SIGKILLed ends the task through the kill ladder and says cancelled; another kill says completed with the reason", async () => {
    const first = await stdioClient(storage);
    const cancelled = await startTask(first.client, { shell: "trap 'echo got-term; exit 143' TERM; sleep 60 & wait" });
    const killed = await startTask(first.client, { argv: ["sleep", "60"] });
    await sigkill(first);

    const next = await stdioClient(storage);
    try {
      const answer = await next.client.experimental.tasks.cancelTask(cancelled.taskId);
      expect(answer).toMatchObject({ taskId: cancelled.taskId, status: "cancelled", statusMessage: expect.stringMatching(/^cancelled by request/) });
      const record = await recordOf(next.client, cancelled.taskId);
      expect(record).toMatchObject({ state: "killed", cancelledAt: expect.any(String), killReason: "cancelled by request" });
      // It ended on the ladder's TERM: its trap ran.
      const result = await next.client.experimental.tasks.getTaskResult(cancelled.taskId, CallToolResultSchema);
      expect(result.isError).toBe(true);
      expect(text(result)).toContain("got-term");
      await expect(next.client.experimental.tasks.cancelTask(cancelled.taskId)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("terminal status: cancelled") });

      // Killed by anyone but its own cancel: completed, a tool error with the reason.
      expect((await callTool(next.client, "kill_task", { id: killed.taskId, graceMs: 500 })).isError).toBe(false);
      expect(await next.client.experimental.tasks.getTask(killed.taskId)).toMatchObject({ status: "completed", statusMessage: expect.stringMatching(/^killed by request/) });
      expect((await next.client.experimental.tasks.getTaskResult(killed.taskId, CallToolResultSchema)).isError).toBe(true);
    } finally {
      await next.close();
    }
  });

  it("a task lost while no server ran is failed, saying what outlive knows; one past its timeout is completed with the reason", async () => {
    const first = await stdioClient(storage);
    const lost = await startTask(first.client, { argv: ["sleep", "60"] });
    const pid = (await recordOf(first.client, lost.taskId)).pid as number;
    await sigkill(first);
    // Killed outright while no server runs: no exit code is ever written.
    process.kill(-pid, "SIGKILL");
    expect(await waitUntil(() => gone(pid), 10_000)).toBe(true);

    const next = await stdioClient(storage);
    try {
      const failed = await next.client.experimental.tasks.getTask(lost.taskId);
      expect(failed).toMatchObject({ status: "failed", statusMessage: expect.stringMatching(/^lost: ended without an exit code/) });
      const result = await next.client.experimental.tasks.getTaskResult(lost.taskId, CallToolResultSchema);
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ task: { state: "lost", exitCode: null } });

      const late = await startTask(next.client, { argv: ["sleep", "30"], timeoutSeconds: 1 });
      const timedOut = await next.client.experimental.tasks.getTaskResult(late.taskId, CallToolResultSchema);
      expect(timedOut.isError).toBe(true);
      expect(await next.client.experimental.tasks.getTask(late.taskId)).toMatchObject({ status: "completed", statusMessage: expect.stringMatching(/^timed out/) });
    } finally {
      await next.close();
    }
  });

  it("keeps a handle its TTL after the task's end and then answers it unknown (-32602), while get_task still reads the task", async () => {
    const server = await stdioClient(storage);
    try {
      const short = await startTask(server.client, { argv: ["true"] }, 1500);
      expect(short.ttl).toBe(1500);
      const ended = await server.client.experimental.tasks.getTaskResult(short.taskId, CallToolResultSchema);
      const end = Date.parse((ended.structuredContent as { task: { finishedAt: string } }).task.finishedAt);
      expect(end).not.toBeNaN();
      expect((await server.client.experimental.tasks.getTask(short.taskId)).status).toBe("completed");
      await waitFor("the TTL after its end to pass", () => Date.now() >= end + 1500, 10_000);
      for (const ask of [() => server.client.experimental.tasks.getTask(short.taskId), () => server.client.experimental.tasks.getTaskResult(short.taskId, CallToolResultSchema)]) {
        await expect(ask()).rejects.toMatchObject({ code: -32602, message: expect.stringContaining(`${short.taskId} expired at`) });
      }
      expect((await server.client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).not.toContain(short.taskId);
      expect((await callTool(server.client, "get_task", { id: short.taskId })).data.task).toMatchObject({ id: short.taskId, state: "exited", exitCode: 0 });
    } finally {
      await server.close();
    }
  });

  it("refuses bad input with -32602 naming it: a TTL that is not a positive integer, an unknown id, a task that is not an MCP task, a bad cursor, a program that is not there", async () => {
    const server = await stdioClient(storage);
    try {
      for (const ttl of [-5, 0, 1.5]) {
        await expect(rawTaskCall(server.client, { argv: ["true"] }, { ttl })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining(`Expected task.ttl to be a whole number of milliseconds above 0, got \`${ttl}\``) });
      }
      // Too long a TTL is granted as the longest the server keeps, and said.
      expect((await rawTaskCall(server.client, { argv: ["true"] }, { ttl: MAX_TASK_TTL_MS * 2 })).task.ttl).toBe(MAX_TASK_TTL_MS);
      await expect(server.client.experimental.tasks.getTask("no-such-task")).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('no task "no-such-task"') });
      await expect(server.client.experimental.tasks.getTask("../etc")).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('"../etc"') });
      const plain = await callTool(server.client, "run_task", { argv: ["true"] });
      await expect(server.client.experimental.tasks.getTaskResult(plain.data.task.id, CallToolResultSchema)).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("not started as an MCP task") });
      await expect(server.client.experimental.tasks.listTasks("bogus")).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('the cursor "bogus" is not one tasks/list gave') });
      await expect(rawTaskCall(server.client, { argv: ["no-such-program-here"] }, {})).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("[E_NOT_FOUND]"), data: { code: "E_NOT_FOUND" } });
      await expect(rawTaskCall(server.client, { argv: [] }, {})).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/^(MCP error -32602: ){1,2}Input validation error: .*argv/) });
    } finally {
      await server.close();
    }
  });

  it("declares the tasks capability and run_task's optional task support, and a plain run_task call still answers at once", async () => {
    const server = await stdioClient(storage);
    try {
      expect(server.client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
      const tools = (await server.client.listTools()).tools;
      expect(tools.find((t) => t.name === "run_task")?.execution).toEqual({ taskSupport: "optional" });
      expect(tools.filter((t) => t.execution?.taskSupport === "optional").map((t) => t.name)).toEqual(["run_task"]);
      const started = Date.now();
      const plain = await callTool(server.client, "run_task", { argv: ["sleep", "30"] });
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(plain.data.task).toMatchObject({ state: "running" });
      expect(plain.data.task.mcpTask).toBeUndefined();
      expect((await callTool(server.client, "kill_task", { id: plain.data.task.id, graceMs: 200 })).isError).toBe(false);
    } finally {
      await server.close();
    }
  });

  it("over Streamable HTTP, a handle made in one MCP session is answered in another: it is not bound to the session", async () => {
    const http = await httpServer(storage);
    try {
      const token = readFileSync(join(storage, "control", "mcp-token"), "utf8").trim();
      const one = await httpClient(http.url, token);
      const created = await startTask(one, { shell: "echo over-http; exit 4" });
      await one.close();
      const other = await httpClient(http.url, token);
      try {
        const result = await other.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema);
        expect(result.structuredContent).toMatchObject({ task: { id: created.taskId, state: "exited", exitCode: 4 } });
        expect(text(result)).toContain("over-http");
      } finally {
        await other.close();
      }
    } finally {
      await http.stop();
    }
  });
});
