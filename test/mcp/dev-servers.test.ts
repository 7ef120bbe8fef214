import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { outliveCli, tempDir } from "../support/cli.ts";
import { freePort, pythonServer } from "../support/free-port.ts";
import { callTool, stdioClient } from "./support/servers.ts";

// A dev server as an agent starts it, through the MCP SDK's own client: run_task with waitReady and ensure,
// its port in list_tasks and get_task, an agent's retry getting the same server.
const temp = tempDir("outlive-mcp-dev-");
const storage = join(temp.dir, "storage");
const VITE = join(__dirname, "..", "..", "node_modules", "vite", "bin", "vite.js");
afterAll(() => {
  outliveCli(["stop-all", "--storage", storage]);
  temp.remove();
});

describe("outlive mcp for dev servers", () => {
  it("run_task waitReady answers once vite listens, with its address; a retry with ensure returns the same task; list_tasks and get_task show the port", async () => {
    const server = await stdioClient(storage, [], temp.dir);
    try {
      const { tools } = await server.client.listTools();
      const run = tools.find((t) => t.name === "run_task")!;
      expect(Object.keys(run.inputSchema.properties ?? {})).toEqual(expect.arrayContaining([
        "readyLog", "readyPort", "readyHttp", "readyTimeoutSeconds", "waitReady", "ensure", "restart", "restartMax", "restartDelaySeconds", "cpuCores", "pidsMax", "envFile",
      ]));
      const port = await freePort();
      const spec = { argv: [process.execPath, VITE, "--port", String(port), "--strictPort", "--host", "127.0.0.1"], cwd: temp.dir, key: "vite", ensure: true, readyPort: port, waitReady: true };
      const first = await callTool(server.client, "run_task", spec);
      expect(first.isError, first.text).toBe(false);
      expect(first.data.ready).toBe(true);
      expect(first.data.task.readyAt).toEqual(expect.any(String));
      const id = first.data.task.id as string;
      expect(first.text).toContain(`Started task ${id}.`);
      expect(first.text).toContain(`Listening on tcp 127.0.0.1:${port} (http://127.0.0.1:${port}/ if it serves HTTP).`);
      expect(first.text).toMatch(/Ready since \S+ \(probe\)\./);

      const retry = await callTool(server.client, "run_task", spec);
      expect(retry.data.task.id).toBe(id);
      expect(retry.text).toContain(`Kept task ${id}: it already runs under key "vite" with the same spec`);

      const listed = await callTool(server.client, "list_tasks", { state: "live" });
      expect(listed.data.tasks.find((t: { id: string }) => t.id === id).ports).toEqual([{ proto: "tcp", address: "127.0.0.1", port }]);
      expect(listed.text).toContain(id);
      const got = await callTool(server.client, "get_task", { id });
      expect(got.data.task.ports).toEqual([{ proto: "tcp", address: "127.0.0.1", port }]);
      expect(got.text).toContain(`http://127.0.0.1:${port}/`);
    } finally {
      await server.close();
    }
  });

  it("run_task waitReady says plainly when the server ended first; wait_task until ready is bounded", { timeout: 180_000 }, async () => {
    // The clash waits on the second server's exit, under the default bound (50 s): a busy machine may take
    // more than a few seconds to start python and have it fail to bind.
    const patient = await stdioClient(storage, [], temp.dir);
    try {
      const port = await freePort();
      const taken = await callTool(patient.client, "run_task", { argv: pythonServer(port), readyPort: port, waitReady: true });
      expect(taken.isError, taken.text).toBe(false);
      const clash = await callTool(patient.client, "run_task", { argv: pythonServer(port), readyPort: port, waitReady: true });
      expect(clash.isError, clash.text).toBe(true);
      expect(clash.text).toMatch(/^Started task t-[0-9a-f]+, but it is not ready: Task t-[0-9a-f]+ exited before it was ready \(exited with code 1\); last output:/);
      expect(clash.text).toContain("Address already in use");
      expect(clash.data).toMatchObject({ ready: false, task: { state: "exited", exitCode: 1 }, error: { code: "E_NOT_READY" } });
    } finally {
      await patient.close();
    }

    const server = await stdioClient(storage, ["--wait-max", "2"], temp.dir);
    try {
      const slow = await callTool(server.client, "run_task", { shell: "sleep 60", readyLog: "never", waitReady: true, readyTimeoutSeconds: 120 });
      expect(slow.isError).toBe(false);
      expect(slow.data.ready).toBe(false);
      expect(slow.text).toContain('Not ready yet after waiting 2 s (still running); call wait_task with until "ready" to keep waiting.');
      const waited = await callTool(server.client, "wait_task", { id: slow.data.task.id, until: "ready", timeoutSeconds: 0.3 });
      expect(waited.data).toMatchObject({ ready: false, ended: false });
      expect(waited.text).toMatch(/^Not ready yet after waiting 0\.3 s/);
    } finally {
      await server.close();
    }
  });
});
