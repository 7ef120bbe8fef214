import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readExitMarkerNow } from "../../lib/observe/exit-marker.ts";
import { tempDir } from "../support/cli.ts";
import { ServeChild } from "../support/serve-child.ts";
import { waitFor } from "../support/wait.ts";

const temp = tempDir("outlive-serve-");
afterAll(() => temp.remove());
let n = 0;
const storage = () => join(temp.dir, `s${n++}`);
const serve = (dir: string) => new ServeChild(["--storage", dir, "--mode", "standalone"]);
type Record = { id: string; state: string; exitCode: number | null; reason: string | null; acknowledgedAt: string | null };

describe("outlive serve on its stdio", () => {
  it("runs a task and sends its completion once; an acknowledged one is not sent again by the next server", async () => {
    const dir = storage();
    const first = serve(dir);
    const hello = await first.initialize();
    expect(hello).toMatchObject({ protocolVersion: "1", serverInfo: { name: "outlive" }, role: "holder", storage: dir });
    await first.request("completions/subscribe", {});
    const task = await first.request<Record>("run", { shell: "echo out; echo err >&2; exit 3" });
    expect(task.state).toBe("running");
    const done = await first.until(() => first.notifications("completion").find((r) => r.id === task.id));
    expect(done).toMatchObject({ state: "exited", exitCode: 3 });
    const out = await first.request<{ data: string; next: number; done: boolean }>("output", { id: task.id });
    expect(Buffer.from(out.data, "base64").toString()).toBe("out\n");
    expect(out).toMatchObject({ next: 4, done: true });
    // Asked past the end: nothing, and the stream's real size.
    expect(await first.request("output", { id: task.id, from: 100 })).toMatchObject({ offset: 100, next: 100, size: 4, data: "", done: true });
    await first.request("ack", { id: task.id });
    // Nothing twice in one subscription.
    await new Promise((r) => setTimeout(r, 300));
    expect(first.notifications("completion").filter((r) => r.id === task.id)).toHaveLength(1);
    await first.close();

    const second = serve(dir);
    await second.initialize();
    await second.request("completions/subscribe", {});
    expect((await second.request<Record>("get", { id: task.id })).acknowledgedAt).not.toBeNull();
    await new Promise((r) => setTimeout(r, 500));
    expect(second.notifications("completion")).toEqual([]);
    await second.close();
  });

  it("a task that ends while no server runs is delivered by the next one, exactly once, with its exit code", async () => {
    const dir = storage();
    const first = serve(dir);
    await first.initialize();
    const task = await first.request<Record>("run", { shell: "sleep 1; exit 7" });
    await first.kill("SIGKILL");
    // It ends while no server runs: its exit marker says so (a fixed 1.5 s was a guess a busy machine can outrun).
    const exitFile = join(dir, "tasks", task.id, "io", "exit");
    await waitFor("the task's exit code in its marker", () => readExitMarkerNow(exitFile).kind === "code");
    const second = serve(dir);
    const hello = await second.initialize() as { replay: { finished: Array<{ id: string }> } };
    expect(hello.replay.finished.map((f) => f.id)).toContain(task.id);
    await second.request("completions/subscribe", {});
    const done = await second.until(() => second.notifications("completion").find((r) => r.id === task.id));
    expect(done).toMatchObject({ state: "exited", exitCode: 7 });
    await new Promise((r) => setTimeout(r, 300));
    expect(second.notifications("completion").filter((r) => r.id === task.id)).toHaveLength(1);
    await second.close();
  });

  it("a second server on the same storage serves its own parent through the holder, and takes the storage over when the holder dies", async () => {
    const dir = storage();
    const holder = serve(dir);
    expect((await holder.initialize()).role).toBe("holder");
    const client = serve(dir);
    expect((await client.initialize()).role).toBe("client");
    await holder.request("completions/subscribe", {});
    await client.request("completions/subscribe", {});
    // Every subscriber gets every completion, whoever ran the task.
    const quick = await client.request<Record>("run", { shell: "exit 4" });
    await holder.until(() => holder.notifications("completion").find((r) => r.id === quick.id));
    await client.until(() => client.notifications("completion").find((r) => r.id === quick.id));

    const long = await client.request<Record>("run", { shell: "for i in 1 2 3 4 5 6; do echo line$i; sleep 0.4; done; exit 5" });
    const { followId } = await client.request<{ followId: string }>("output/follow", { id: long.id });
    await client.until(() => client.notifications("output").some((c) => c.followId === followId && Buffer.from((c.data as string | undefined) ?? "", "base64").toString().includes("line1")));
    await holder.kill("SIGKILL");
    // The client takes over: its requests are answered by itself now, the follow goes on and the completion comes.
    const done = await client.until(() => client.notifications("completion").find((r) => r.id === long.id), 20_000);
    expect(done).toMatchObject({ state: "exited", exitCode: 5 });
    await client.until(() => client.notifications("output").find((c) => c.followId === followId && c.end === true), 10_000);
    const text = client.notifications("output").filter((c) => c.followId === followId && c.data).map((c) => Buffer.from(c.data as string, "base64").toString()).join("");
    expect(text).toBe("line1\nline2\nline3\nline4\nline5\nline6\n");
    expect((await client.request<Record>("get", { id: quick.id })).exitCode).toBe(4);
    expect(client.stderr).toContain("taking the storage over");
    const lock = readFileSync(join(dir, "supervisor.lock"), "utf8");
    expect(lock).toContain(String(client.child.pid));
    await client.close();
    expect(readdirSync(join(dir, "control"))).toEqual([]);
  }, 40_000);
});
