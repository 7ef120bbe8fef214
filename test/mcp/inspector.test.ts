import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, outliveCli, tempDir } from "../support/cli.ts";
import { httpServer } from "./support/servers.ts";

// The MCP Inspector's CLI (@modelcontextprotocol/inspector-cli 1.0.3, pinned: it runs on Node 20,
// where the current @modelcontextprotocol/inspector needs Node >= 22) drives outlive mcp as a user
// would from a shell: one Inspector process a call, each spawning its own outlive mcp. Its CLI has
// no run-as-task (no way to send a task-augmented tools/call or tasks/*): it sees run_task's task
// support in tools/list, and calls it plainly; durable MCP tasks are tested with the SDK's client
// (tasks.test.ts).
const INSPECTOR = join(__dirname, "..", "..", "node_modules", "@modelcontextprotocol", "inspector-cli", "build", "index.js");
const temp = tempDir("outlive-mcp-inspector-");
const storage = join(temp.dir, "storage");
afterAll(() => {
  outliveCli(["stop-all", "--storage", storage]);
  temp.remove();
});

/**
 * `mcp-inspector-cli TARGET --method …`; its JSON answer on stdout. The
 * Inspector reads its own package.json by a path it checks relative to the
 * working directory but imports relative to its module, so it only starts
 * from a directory whose `../package.json` is its own: its build directory.
 * Its target's flags follow `--` (before it, the Inspector takes them as its own).
 */
function inspector(args: string[]): Promise<{ code: number; json: any; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [INSPECTOR, ...args], { cwd: dirname(INSPECTOR), timeout: 60_000 }, (error, out, err) => {
      let json: unknown = null;
      try {
        json = JSON.parse(out);
      } catch {
        // not JSON: the test says so with the output
      }
      resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, json, err: `${err}${json === null ? out : ""}` });
    });
  });
}

const stdioTarget = (method: string, ...rest: string[]) => [process.execPath, CLI, "mcp", "--method", method, ...rest, "--", "--storage", storage, "--mode", "standalone"];

describe.skipIf(!existsSync(INSPECTOR))("outlive mcp with the MCP Inspector's CLI", () => {
  if (!existsSync(INSPECTOR)) console.log(`skipped: no Inspector CLI at ${INSPECTOR} (npm ci installs it)`);

  it("lists the tools over stdio", async () => {
    const r = await inspector(stdioTarget("tools/list"));
    expect(r.code, r.err).toBe(0);
    expect(r.json.tools.map((t: { name: string }) => t.name)).toEqual(["run_task", "list_tasks", "get_task", "task_output", "wait_task", "kill_task", "send_input", "ack_task"]);
    expect(r.json.tools[0].execution).toEqual({ taskSupport: "optional" });
  });

  it("runs a task in one call and waits for its end in the next, each through a server of its own", async () => {
    const run = await inspector(stdioTarget("tools/call", "--tool-name", "run_task", "--tool-arg", "shell=echo from-inspector; exit 6", "id=inspected"));
    expect(run.code, run.err).toBe(0);
    expect(run.json.isError ?? false).toBe(false);
    expect(run.json.structuredContent.task).toMatchObject({ id: "inspected", state: "running" });

    const waited = await inspector(stdioTarget("tools/call", "--tool-name", "wait_task", "--tool-arg", "id=inspected", "timeoutSeconds=30"));
    expect(waited.code, waited.err).toBe(0);
    expect(waited.json.structuredContent.task).toMatchObject({ state: "exited", exitCode: 6, reason: "exited with code 6" });
    expect(waited.json.content[0].text).toContain("Task inspected is exited (exited with code 6)");

    const missing = await inspector(stdioTarget("tools/call", "--tool-name", "get_task", "--tool-arg", "id=nope"));
    expect(missing.code, missing.err).toBe(0);
    expect(missing.json.isError).toBe(true);
    expect(missing.json.content[0].text).toContain("[E_NO_TASK]");
  });

  it("calls a tool over Streamable HTTP with the bearer token, and is turned away without it", async () => {
    const server = await httpServer(storage);
    try {
      const token = readFileSync(join(storage, "control", "mcp-token"), "utf8").trim();
      const got = await inspector([server.url, "--transport", "http", "--header", `Authorization: Bearer ${token}`, "--method", "tools/call", "--tool-name", "get_task", "--tool-arg", "id=inspected"]);
      expect(got.code, got.err).toBe(0);
      expect(got.json.structuredContent.task).toMatchObject({ id: "inspected", state: "exited", exitCode: 6 });

      const refused = await inspector([server.url, "--transport", "http", "--method", "tools/list"]);
      expect(refused.code).not.toBe(0);
      expect(refused.err).toMatch(/401|Unauthorized|Bearer/i);
    } finally {
      await server.stop();
    }
  });
});
