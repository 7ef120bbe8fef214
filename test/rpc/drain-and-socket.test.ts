import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { controlSocketPath } from "../../lib/mod.ts";
import { tempDir } from "../support/cli.ts";
import { ServeChild } from "../support/serve-child.ts";

const temp = tempDir("outlive-serve-drain-");
afterAll(() => temp.remove());
let n = 0;
const storage = () => join(temp.dir, `s${n++}`);
const serve = (dir: string) => new ServeChild(["--storage", dir, "--mode", "standalone"]);
type Record = { id: string; state: string; exitCode: number | null; reason: string | null };

/** Raw lines on the storage's socket, as a client in another language sends them; resolves with each answer line. */
function socketLines(dir: string, lines: string[], answers: number): Promise<Array<{ id: unknown; result?: unknown; error?: { code: number; message: string } }>> {
  return new Promise((resolve, reject) => {
    const socket = connect(controlSocketPath(dir));
    let text = "";
    socket.setEncoding("utf8");
    socket.on("error", reject);
    socket.on("connect", () => socket.write(lines.map((l) => `${l}\n`).join("")));
    socket.on("data", (chunk: string) => {
      text += chunk;
      const got = text.split("\n").filter(Boolean);
      if (got.length >= answers) {
        socket.end();
        resolve(got.map((l) => JSON.parse(l)));
      }
    });
  });
}

describe("serve's drain, and the socket it serves", () => {
  it("drain restart leaves the tasks running for the next server; drain disable ends them; serve exits 0 each time", async () => {
    const dir = storage();
    const first = serve(dir);
    await first.initialize();
    const task = await first.request<Record>("run", { argv: ["sleep", "30"] });
    expect(await first.request("drain", { reason: "restart" })).toEqual({ draining: "restart" });
    expect((await first.exited).code).toBe(0);
    const second = serve(dir);
    const hello = await second.initialize() as { replay: { adopted: string[] } };
    expect(hello.replay.adopted).toContain(task.id);
    expect((await second.request<Record>("get", { id: task.id })).state).toBe("running");
    await second.request("drain", { reason: "disable" });
    expect((await second.exited).code).toBe(0);
    const third = serve(dir);
    await third.initialize();
    expect(await third.request<Record>("get", { id: task.id })).toMatchObject({ state: "killed" });
    await expect(third.request("drain", { reason: "nap" })).rejects.toMatchObject({ code: -32602, data: { param: "reason" } });
    await third.close();
  });

  it("the socket answers bad lines with error objects and serves on; drain is refused there", async () => {
    const dir = storage();
    const holder = serve(dir);
    await holder.initialize();
    const answers = await socketLines(dir, [
      "not json",
      '{"jsonrpc":"2.0","id":1,"method":"list"}',
      '{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"1"}}',
      '{"jsonrpc":"2.0","id":3,"method":"drain","params":{"reason":"disable"}}',
      '{"jsonrpc":"2.0","id":4,"method":"list"}',
    ], 5);
    const byId = (id: unknown) => answers.find((a) => a.id === id)!;
    expect(byId(null).error?.code).toBe(-32700);
    expect(byId(1).error?.code).toBe(-32002);
    expect(byId(2).result).toMatchObject({ protocolVersion: "1", role: "holder" });
    expect(byId(3).error?.code).toBe(-32601);
    expect(byId(4).result).toEqual([]);
    expect(await holder.request("list", {})).toEqual([]);
    await holder.close();
  });

  it("a client server takes the storage over when the holder's parent ends it cleanly", async () => {
    const dir = storage();
    const holder = serve(dir);
    await holder.initialize();
    const client = serve(dir);
    expect((await client.initialize()).role).toBe("client");
    await client.request("completions/subscribe", {});
    const task = await client.request<Record>("run", { shell: "sleep 1.5; exit 9" });
    await holder.close();
    const done = await client.until(() => client.notifications("completion").find((r) => r.id === task.id), 20_000);
    expect(done).toMatchObject({ exitCode: 9, state: "exited" });
    await client.request("ack", { id: task.id });
    await client.close();
  }, 30_000);
});
