import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { waitUntil } from "../../lib/kill/process-group.ts";
import { CLI, outliveCli, tempDir } from "../support/cli.ts";
import { callTool, gone, stdioClient } from "./support/servers.ts";

// outlive mcp over stdio, driven by the MCP SDK's own client, which spawns the built CLI as an
// agent's harness does. Real tasks in a temp storage; standalone mode, so it runs without systemd.
const temp = tempDir("outlive-mcp-stdio-");
const storage = join(temp.dir, "storage");
afterAll(() => {
  outliveCli(["stop-all", "--storage", storage]);
  temp.remove();
});

const TOOLS = ["run_task", "list_tasks", "get_task", "task_output", "wait_task", "kill_task", "send_input", "ack_task"];

describe("outlive mcp on stdio, with the SDK's client", () => {
  it("lists the eight tools, each with a description and an input schema", async () => {
    const server = await stdioClient(storage);
    try {
      const { tools } = await server.client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
      for (const tool of tools) {
        expect(tool.description, tool.name).toBeTruthy();
        expect(tool.inputSchema.type, tool.name).toBe("object");
      }
      const run = tools.find((t) => t.name === "run_task")!;
      expect(Object.keys(run.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(["argv", "shell", "cwd", "env", "key", "timeoutSeconds", "pty"]));
      const wait = tools.find((t) => t.name === "wait_task")!;
      expect(wait.inputSchema.required).toEqual(["id"]);
      expect(server.client.getServerVersion()?.name).toBe("outlive");
    } finally {
      await server.close();
    }
    // The agent closing its end is the server's cue: it closes the storage and exits by itself.
    expect(await waitUntil(() => gone(server.pid), 10_000)).toBe(true);
    expect(server.stderr()).toContain("stdin ended; closing (tasks run on)");
  });

  it("runs a task, waits for its end, reads both streams, and acks it; each answer says the state and the recorded reason", async () => {
    const server = await stdioClient(storage);
    try {
      const run = await callTool(server.client, "run_task", { shell: "echo out-line; echo err-line >&2; exit 3" });
      expect(run.isError, run.text).toBe(false);
      const id = run.data.task.id as string;
      expect(run.text).toContain(`Started task ${id}`);

      const waited = await callTool(server.client, "wait_task", { id, timeoutSeconds: 30 });
      expect(waited.data.ended).toBe(true);
      expect(waited.data.task).toMatchObject({ id, state: "exited", exitCode: 3, reason: "exited with code 3" });
      expect(waited.text).toContain(`Task ${id} is exited (exited with code 3)`);
      expect(waited.text).toContain("Not acknowledged yet");

      const out = await callTool(server.client, "task_output", { id });
      expect(out.data).toMatchObject({ id, stream: "stdout", offset: 0, next: 9, size: 9, done: true, text: "out-line\n" });
      expect(out.text).toContain("out-line");
      const err = await callTool(server.client, "task_output", { id, stream: "stderr" });
      expect(err.data.text).toBe("err-line\n");
      const rest = await callTool(server.client, "task_output", { id, from: 4 });
      expect(rest.data).toMatchObject({ offset: 4, text: "line\n", done: true });

      const got = await callTool(server.client, "get_task", { id });
      expect(got.data.task.state).toBe("exited");
      const acked = await callTool(server.client, "ack_task", { id });
      expect(acked.data.task.acknowledgedAt).toEqual(expect.any(String));
      expect(acked.text).toContain("Acknowledged at");
      const listed = await callTool(server.client, "list_tasks", { state: "finished" });
      expect(listed.data.tasks.map((t: { id: string }) => t.id)).toContain(id);
      const second = await callTool(server.client, "run_task", { argv: ["true"] });
      await callTool(server.client, "wait_task", { id: second.data.task.id });
      const newest = await callTool(server.client, "list_tasks", { state: "finished", limit: 1 });
      expect(newest.data.tasks.map((t: { id: string }) => t.id)).toEqual([second.data.task.id]);
      expect(newest.data.total).toBe(listed.data.tasks.length + 1);
      expect(newest.text).toContain(`; the newest 1, oldest first (${listed.data.tasks.length} older not shown`);
    } finally {
      await server.close();
    }
  });

  it("wait_task is bounded: a task still running is said to be, with its state, when the time runs out", async () => {
    const server = await stdioClient(storage);
    try {
      const run = await callTool(server.client, "run_task", { argv: ["sleep", "60"] });
      const id = run.data.task.id as string;
      const waited = await callTool(server.client, "wait_task", { id, timeoutSeconds: 0.5 });
      expect(waited.isError, waited.text).toBe(false);
      expect(waited.data.ended).toBe(false);
      expect(waited.data.task.state).toBe("running");
      expect(waited.text).toMatch(/^Still running after waiting 0\.5 s; call wait_task again/);

      const killed = await callTool(server.client, "kill_task", { id, graceMs: 1000 });
      expect(killed.isError, killed.text).toBe(false);
      expect(killed.data.task.state).toBe("killed");
      expect(killed.data.task.reason).toMatch(/^killed by request/);
      expect(killed.data.how).toBe("term");
      expect(killed.text).toContain("Kill: it ended on SIGTERM within the grace period.");
      const again = await callTool(server.client, "kill_task", { id });
      expect(again.data.how).toBe("terminal");
      expect(again.text).toContain("Kill: it had already ended; nothing was killed.");
    } finally {
      await server.close();
    }
  });

  it("bad input is a tool error naming what was wrong, and changes nothing stored", async () => {
    const server = await stdioClient(storage, ["--wait-max", "20s"]);
    try {
      const before = readdirSync(join(storage, "tasks")).sort();
      const noTask = await callTool(server.client, "get_task", { id: "no-such-task" });
      expect(noTask.isError).toBe(true);
      expect(noTask.text).toMatch(/^get_task failed: .*no-such-task.*\[E_NO_TASK\]$/);
      expect(noTask.data.error.code).toBe("E_NO_TASK");

      const both = await callTool(server.client, "run_task", { argv: ["true"], shell: "true" });
      expect(both.isError).toBe(true);
      expect(both.text).toContain("argv");
      expect(both.text).toContain("shell");
      expect(both.text).toContain("[E_BAD_OPTION]");

      const wrongType = await callTool(server.client, "run_task", { argv: "true" });
      expect(wrongType.isError).toBe(true);
      expect(wrongType.text).toMatch(/argv/);

      const tooLong = await callTool(server.client, "wait_task", { id: "no-such-task", timeoutSeconds: 21 });
      expect(tooLong.isError).toBe(true);
      expect(tooLong.text).toContain("timeoutSeconds is 21; expected at most 20 (this server's --wait-max)");

      const missing = await callTool(server.client, "kill_task", {});
      expect(missing.isError).toBe(true);
      expect(missing.text).toMatch(/\bid\b/);

      const notPty = await callTool(server.client, "run_task", { argv: ["true"] });
      await callTool(server.client, "wait_task", { id: notPty.data.task.id });
      const typed = await callTool(server.client, "send_input", { id: notPty.data.task.id, text: "x" });
      expect(typed.isError).toBe(true);
      expect(typed.text).toContain("[E_NOT_PTY]");

      const unknown = await server.client.callTool({ name: "no_such_tool", arguments: {} });
      expect(unknown.isError).toBe(true);
      // Only the one task run on purpose was added; the server still answers.
      expect(readdirSync(join(storage, "tasks")).filter((n) => !before.includes(n))).toEqual([notPty.data.task.id]);
      expect((await callTool(server.client, "list_tasks", {})).isError).toBe(false);
    } finally {
      await server.close();
    }
  });

  it("types into a PTY task's terminal with send_input, and reads what it echoes", async () => {
    const server = await stdioClient(storage);
    try {
      const run = await callTool(server.client, "run_task", { argv: ["cat"], pty: { cols: 80, rows: 24 } });
      expect(run.isError, run.text).toBe(false);
      const id = run.data.task.id as string;
      const typed = await callTool(server.client, "send_input", { id, text: "hello-pty\n" });
      expect(typed.data.bytes).toBe(10);
      let seen = "";
      await waitUntil(async () => {
        seen = (await callTool(server.client, "task_output", { id })).data.text as string;
        return seen.includes("hello-pty");
      }, 10_000);
      expect(seen).toContain("hello-pty");
      await callTool(server.client, "kill_task", { id });
    } finally {
      await server.close();
    }
  });

  it("starts a task in the directory the agent started outlive mcp in, unless run_task names a cwd", async () => {
    const project = join(temp.dir, "project");
    mkdirSync(project);
    const server = await stdioClient(storage, [], project);
    try {
      const here = await callTool(server.client, "run_task", { argv: ["pwd"] });
      await callTool(server.client, "wait_task", { id: here.data.task.id });
      expect((await callTool(server.client, "task_output", { id: here.data.task.id })).data.text).toBe(`${realpathSync(project)}\n`);
      const there = await callTool(server.client, "run_task", { argv: ["pwd"], cwd: temp.dir });
      await callTool(server.client, "wait_task", { id: there.data.task.id });
      expect((await callTool(server.client, "task_output", { id: there.data.task.id })).data.text).toBe(`${realpathSync(temp.dir)}\n`);
    } finally {
      await server.close();
    }
  });

  it("answers a line that is not JSON (-32700) and one over --max-line-bytes (-32600), and reads on", async () => {
    const child = spawn(process.execPath, [CLI, "mcp", "--storage", storage, "--mode", "standalone", "--max-line-bytes", "2048"], { stdio: ["pipe", "pipe", "ignore"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const answers = () => out.split("\n").filter(Boolean).map((line) => JSON.parse(line));
    const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } };
    child.stdin.write(`not json\n${"x".repeat(5000)}\n${JSON.stringify(initialize)}\n`);
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })}\n`);
    expect(await waitUntil(() => answers().some((a) => a.id === 2), 20_000)).toBe(true);
    child.stdin.end();
    await new Promise((resolve) => child.once("exit", resolve));
    const all = answers();
    expect(all[0]).toMatchObject({ id: null, error: { code: -32700 } });
    expect(all[0].error.message).toContain('a request line is not JSON: "not json"');
    expect(all[1]).toMatchObject({ id: null, error: { code: -32600 } });
    expect(all[1].error.message).toContain("a request line of 5000 bytes is longer than the 2048 this server takes (--max-line-bytes)");
    expect(all.find((a) => a.id === 1)?.result.serverInfo.name).toBe("outlive");
    expect(all.find((a) => a.id === 2)?.result.tools).toHaveLength(8);
    expect(child.exitCode).toBe(0);
  });
});
