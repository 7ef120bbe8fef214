import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "../support/cli.ts";
import { freePort, pythonServer } from "../support/free-port.ts";
import { schemaProblem } from "../support/rpc-schema.ts";
import { ServeChild, type WireError } from "../support/serve-child.ts";

// Dev servers over the wire, from a client in another process: outlive serve as a child spoken to in JSON-RPC lines,
// and a second one that is the first's client through the storage's control socket.
const { dir: storage, remove } = tempDir("outlive-rpc-dev-");
const servers: ServeChild[] = [];
afterAll(async () => {
  for (const s of servers) if (s.child.exitCode === null) await s.close();
  remove();
});
function serve(): ServeChild {
  const s = new ServeChild(["--stdio", "--storage", storage, "--mode", "standalone"]);
  servers.push(s);
  return s;
}

describe("dev servers on the wire", () => {
  it("run waitReady fails with E_NOT_READY and the task in data.task; wait until ready answers the record as it is when its timeoutMs runs out", async () => {
    const s = serve();
    await s.request("initialize", { protocolVersion: "1" });
    const error = await s.request("run", { shell: "echo 'boom' >&2; exit 3", readyPort: 1, waitReady: true }).catch((e: WireError) => e) as WireError;
    expect(error.code).toBe(-32000);
    expect(error.data).toMatchObject({ code: "E_NOT_READY", task: { state: "exited", exitCode: 3, readyAt: null } });
    expect(error.message).toMatch(/exited before it was ready \(exited with code 3\); last output:\n\[stderr\]\nboom/);
    expect(schemaProblem("$defs/ErrorObject", error)).toBeNull();
    const slow = await s.request<any>("run", { shell: "sleep 60", readyLog: "never", readyTimeoutSeconds: 120 });
    const waited = await s.request<any>("wait", { id: slow.id, until: "ready", timeoutMs: 200 });
    expect(waited).toMatchObject({ id: slow.id, state: "running", readyAt: null, ports: [] });
    const noCondition = await s.request<any>("run", { argv: ["sleep", "60"] });
    const refused = await s.request("wait", { id: noCondition.id, until: "ready" }).catch((e: WireError) => e) as WireError;
    expect(refused.data?.code).toBe("E_BAD_OPTION");
    const bad = await s.request("run", { argv: ["true"], readyPort: 99999 }).catch((e: WireError) => e) as WireError;
    expect(bad).toMatchObject({ code: -32602, data: { code: "E_BAD_OPTION", param: "readyPort" } });
    await s.request("kill", { id: slow.id });
    await s.request("kill", { id: noCondition.id });
  });

  it("through the holder's socket: a client's run waits for readiness, and its subscriber hears ready", async () => {
    const holder = serve();
    await holder.request("initialize", { protocolVersion: "1" });
    const client = serve();
    expect((await client.request<any>("initialize", { protocolVersion: "1" })).role).toBe("client");
    await client.request("completions/subscribe", {});
    const port = await freePort();
    const task = await client.request<any>("run", { argv: pythonServer(port), readyPort: port, key: "web", ensure: true, waitReady: true });
    expect(task).toMatchObject({ readyAtSource: "probe", ensured: { outcome: "started" } });
    await client.until(() => client.received.find((m) => m.method === "ready" && (m.params as { id: string }).id === task.id));
    const got = await holder.request<any>("get", { id: task.id });
    expect(got.ports).toEqual([{ proto: "tcp", address: "127.0.0.1", port }]);
    expect(schemaProblem("notifications/ready/params", client.received.find((m) => m.method === "ready")!.params)).toBeNull();
    expect(schemaProblem("methods/get/result", got)).toBeNull();
    await holder.request("kill", { id: task.id });
  });
});
