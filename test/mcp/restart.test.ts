import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { waitUntil } from "../../lib/kill/process-group.ts";
import { outliveCli, tempDir } from "../support/cli.ts";
import { callTool, gone, stdioClient } from "./support/servers.ts";

// An agent whose harness restarts (and with it outlive mcp) finds its tasks again through the next
// server: the server is SIGKILLed as a harness's end would take it, the task runs on, and the next
// server tells its real end.
const temp = tempDir("outlive-mcp-restart-");
const storage = join(temp.dir, "storage");
afterAll(() => {
  outliveCli(["stop-all", "--storage", storage]);
  temp.remove();
});

describe("outlive mcp across a restart of the agent's harness", () => {
  it("a task started through one server is found by the next after the first was SIGKILLed, with its real end", async () => {
    const first = await stdioClient(storage);
    const run = await callTool(first.client, "run_task", { shell: "sleep 2; echo done-after-restart; exit 7", key: "build" });
    expect(run.isError, run.text).toBe(false);
    const id = run.data.task.id as string;
    const taskPid = run.data.task.pid as number;
    process.kill(first.pid, "SIGKILL");
    expect(await waitUntil(() => gone(first.pid), 10_000)).toBe(true);
    await first.close().catch(() => {});
    // The task did not go with the server.
    expect(gone(taskPid)).toBe(false);

    const next = await stdioClient(storage);
    try {
      const found = await callTool(next.client, "get_task", { id });
      expect(found.isError, found.text).toBe(false);
      expect(found.data.task).toMatchObject({ id, key: "build" });
      expect(["running", "exited"]).toContain(found.data.task.state);

      const listed = await callTool(next.client, "list_tasks", { key: "build" });
      expect(listed.data.tasks.map((t: { id: string }) => t.id)).toEqual([id]);

      const waited = await callTool(next.client, "wait_task", { id, timeoutSeconds: 30 });
      expect(waited.data.ended).toBe(true);
      expect(waited.data.task).toMatchObject({ state: "exited", exitCode: 7, reason: "exited with code 7", acknowledgedAt: null });
      expect((await callTool(next.client, "task_output", { id })).data.text).toBe("done-after-restart\n");
      expect((await callTool(next.client, "ack_task", { id })).data.task.acknowledgedAt).toEqual(expect.any(String));
    } finally {
      await next.close();
    }
  });

  it("two servers share one storage: the second goes through the first, and takes the storage over when the first is SIGKILLed", async () => {
    const holder = await stdioClient(storage);
    const second = await stdioClient(storage);
    try {
      expect(second.stderr()).toMatch(/serving through its control socket/);
      const run = await callTool(holder.client, "run_task", { shell: "sleep 2; exit 5" });
      const id = run.data.task.id as string;
      const seen = await callTool(second.client, "get_task", { id });
      expect(seen.isError, seen.text).toBe(false);
      expect(seen.data.task.state).toBe("running");

      process.kill(holder.pid, "SIGKILL");
      expect(await waitUntil(() => gone(holder.pid), 10_000)).toBe(true);
      const waited = await callTool(second.client, "wait_task", { id, timeoutSeconds: 30 });
      expect(waited.isError, waited.text).toBe(false);
      expect(waited.data.task).toMatchObject({ state: "exited", exitCode: 5, reason: "exited with code 5" });
      expect(second.stderr()).toMatch(/taking the storage over/);
    } finally {
      await holder.close().catch(() => {});
      await second.close();
    }
  });
});
