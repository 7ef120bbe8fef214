// The published schema (lib/rpc/schema/outlive-rpc.schema.json) checked
// against real traffic: the built `outlive serve` in a process of its own,
// driven over its stdio through every method and both notifications, and
// every request it was sent, every line it answered and every notification it
// sent validated with ajv. Then the same storage in a second server, for what
// replay found and for a completion of a task that ended while no server ran,
// and a third, the second's client over the control socket. Every value ajv
// judged is judged again by Python's jsonschema where it is installed, so the
// document is also checked as another language's client reads it.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Supervisor } from "../../lib/mod.ts";
import { METHODS, NOTIFICATIONS } from "../../lib/rpc/protocol.ts";
import { rpcSchemaPath } from "../../lib/rpc/schema/mod.ts";
import { tempDir } from "../support/cli.ts";
import { at, rpcSchema, schemaProblem } from "../support/rpc-schema.ts";
import { ServeChild } from "../support/serve-child.ts";
import { exitCodeWritten, waitFor } from "../support/wait.ts";
import { freePort, pythonServer } from "../support/free-port.ts";

const { dir: storage, remove } = tempDir("outlive-rpc-schema-");
const { dir: inProcess, remove: removeInProcess } = tempDir("outlive-rpc-schema-lib-");
const servers: ServeChild[] = [];
const pythonMissing = (() => {
  try {
    execFileSync("python3", ["-c", "import jsonschema, referencing"], { stdio: "ignore" });
    return null;
  } catch {
    return "python3 with jsonschema >= 4.18 (and referencing) is not installed";
  }
})();
if (pythonMissing) console.log(`skipped: the schema in a second validator: ${pythonMissing}`);
const leaders: ChildProcess[] = [];
afterAll(async () => {
  for (const s of servers) if (s.child.exitCode === null) await s.close();
  for (const l of leaders) {
    try {
      process.kill(-l.pid!, "SIGKILL");
    } catch {
      // Gone already: the test ended it.
    }
  }
  remove();
  removeInProcess();
});

/** Every value ajv judged here, where, and its verdict: handed to a second validator at the end. */
const judged: Array<{ pointer: string; value: unknown; valid: boolean }> = [];

/** ajv's verdict, kept for the second validator. */
function judge(pointer: string, value: unknown): string | null {
  const problem = schemaProblem(pointer, value);
  judged.push({ pointer, value, valid: problem === null });
  return problem;
}

/** Every line of one server's traffic checked against the schema; returns the methods and notifications it saw. */
function checkTraffic(s: ServeChild): { methods: Set<string>; notifications: Set<string>; problems: string[] } {
  const methods = new Set<string>();
  const notifications = new Set<string>();
  const problems: string[] = [];
  const asked = new Map<unknown, string>();
  for (const m of s.sent as Array<{ id: unknown; method: string; params?: unknown }>) {
    asked.set(m.id, m.method);
    const p = judge(at("methods", m.method, "params"), m.params ?? {});
    if (p) problems.push(`request ${m.method}: ${p}`);
  }
  for (const m of s.received as Array<{ id?: unknown; method?: string; params?: unknown; result?: unknown; error?: unknown }>) {
    const line = JSON.stringify(m).slice(0, 200);
    const envelope = judge("$defs/Message", m);
    if (envelope) problems.push(`line ${line}: ${envelope}`);
    if (m.method !== undefined) {
      notifications.add(m.method);
      const p = rpcSchema.notifications[m.method] ? judge(at("notifications", m.method, "params"), m.params) : "not a notification of the schema";
      if (p) problems.push(`notification ${m.method}: ${p}`);
    } else if (m.error) {
      problems.push(`an error answered ${asked.get(m.id)}: ${JSON.stringify(m.error)}`);
    } else {
      const method = asked.get(m.id);
      if (method === undefined) {
        problems.push(`a response to no request: ${line}`);
        continue;
      }
      methods.add(method);
      const p = judge(at("methods", method, "result"), m.result);
      if (p) problems.push(`result of ${method}: ${p}`);
    }
  }
  return { methods, notifications, problems };
}

/** The bytes of one stream in a follow's `output` notifications (their params), as text. */
const decode = (chunks: Array<Record<string, unknown>>, stream: string) =>
  Buffer.concat(chunks.filter((p) => p.stream === stream && p.data).map((p) => Buffer.from(p.data as string, "base64"))).toString("utf8");

/** `outlive serve` on the test's storage, in standalone mode: tasks as process groups, which every machine has. */
function serve(): ServeChild {
  const s = new ServeChild(["--stdio", "--storage", storage, "--mode", "standalone"]);
  servers.push(s);
  return s;
}

/** The params of the first notification of `method` received since index `from` that `match` accepts. */
function notified(s: ServeChild, method: string, match: (p: any) => boolean, from = 0): Promise<any> {
  return s.until(() => (s.received.slice(from).find((m) => m.method === method && match(m.params)) as { params: unknown } | undefined)?.params);
}

describe("the published schema", () => {
  it("is a valid draft 2020-12 schema that ships in the package", () => {
    // Compiling every place in strict mode throws on a keyword ajv does not know or a $ref that leads nowhere.
    for (const name of Object.keys(rpcSchema.methods)) {
      expect(schemaProblem(at("methods", name, "params"), null)).not.toBeNull();
      schemaProblem(at("methods", name, "result"), null);
    }
    for (const name of Object.keys(rpcSchema.notifications)) schemaProblem(at("notifications", name, "params"), null);
    // Exactly the methods and notifications the server has (lib/rpc/protocol.ts), in the same order.
    expect(Object.keys(rpcSchema.methods)).toEqual([...METHODS]);
    expect(Object.keys(rpcSchema.notifications)).toEqual([...NOTIFICATIONS]);
    const root = join(__dirname, "..", "..");
    const pack = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }));
    const shipped = (pack[0].files as Array<{ path: string }>).map((f) => f.path);
    expect(shipped).toContain("lib/rpc/schema/outlive-rpc.schema.json");
    const exported = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).exports["./rpc-schema.json"];
    expect(exported).toBe("./lib/rpc/schema/outlive-rpc.schema.json");
    expect(existsSync(rpcSchemaPath())).toBe(true);
  });

  it("fails what does not match: a record with a wrong state, an unknown field, a result that is not base64", async () => {
    // A real record, written by the library in process, is the starting point: the schema passes it as it is.
    const sup = await Supervisor.open({ storage: inProcess, mode: "standalone", log: () => {} });
    try {
      const record = await sup.wait((await sup.run({ argv: ["true"] })).id);
      expect(judge("$defs/TaskRecord", record)).toBeNull();
      expect(judge("notifications/completion/params", record)).toBeNull();
      expect(judge("$defs/ReplayReport", sup.replayReport)).toBeNull();
      expect(judge("$defs/TaskRecord", { ...record, state: "sleeping" })).toMatch(/state/);
      expect(judge("$defs/TaskRecord", { ...record, surprise: 1 })).toMatch(/additional properties/);
      const { bootId: _, ...missing } = record;
      expect(judge("$defs/TaskRecord", missing)).toMatch(/bootId/);
      expect(judge("methods/run/result", record)).toMatch(/state/); // run answers a running record
      expect(judge("notifications/completion/params", { ...record, state: "running" })).toMatch(/state/);
      const chunk = { id: record.id, stream: "stdout", offset: 0, missed: 0, data: "aGk=", next: 2, size: 2, done: true };
      expect(judge("methods/output/result", chunk)).toBeNull();
      expect(judge("methods/output/result", { ...chunk, data: "not base64!" })).toMatch(/data/);
      expect(judge("methods/run/params", { argv: ["true"], shell: "true" })).not.toBeNull();
      expect(judge("$defs/ErrorObject", { code: -32000, message: "No task" })).toMatch(/data/);
      // What standalone traffic cannot show: limits (refused in a process group), E_NOT_READY's task, bad new params.
      expect(judge("methods/run/params", { argv: ["vite"], cpuCores: 0.5, pidsMax: 64, ensure: true, key: "web" })).toBeNull();
      expect(judge("methods/run/params", { argv: ["vite"], readyPort: 0 })).toMatch(/readyPort/);
      expect(judge("methods/run/params", { argv: ["vite"], restart: "sometimes" })).toMatch(/restart/);
      expect(judge("methods/run/params", { argv: ["vite"], readyHttp: "ftp://x/" })).toMatch(/readyHttp/);
      expect(judge("methods/wait/params", { id: record.id, until: "soon" })).toMatch(/until/);
      expect(judge("$defs/ErrorObject", { code: -32000, message: "not ready", data: { code: "E_NOT_READY", task: record } })).toBeNull();
      const limited = { ...record, cpuCores: 0.5, pidsMax: 8, limitEvents: { forksRefused: 3, cpuThrottledPeriods: 10, cpuThrottledUsec: 12345 }, restart: { when: "always", max: 2, delayMs: 100, delayMaxMs: 200 }, restarts: 2 };
      expect(judge("$defs/TaskRecord", limited)).toBeNull();
      expect(judge("$defs/TaskRecord", { ...limited, ports: [{ proto: "sctp", address: "::", port: 1 }] })).toMatch(/proto/);
    } finally {
      await sup.close();
    }
  });

  it("matches every request, result and notification of a real outlive serve, through every method", async () => {
    const s = serve();
    const init = await s.request<any>("initialize", { protocolVersion: "1", clientInfo: { name: "schema-test", version: "1" } });
    expect(init.protocolVersion).toBe("1");
    expect(await s.request<any>("completions/subscribe", {})).toEqual({ subscribed: true });

    // argv and shell tasks, with every RunSpec field a task without a terminal takes.
    const echo = await s.request<any>("run", {
      id: "echo", argv: ["sh", "-c", "printf 'out\\n'; printf 'err\\n' >&2"], cwd: storage, env: { SCHEMA_TEST: "1" },
      key: "schema-key", timeoutSeconds: 60, maxOutputBytes: 0,
    });
    expect(echo.state).toBe("running");
    const ended = await s.request<any>("wait", { id: "echo" });
    expect(ended.state).toBe("exited");
    await notified(s, "completion", (p) => p.id === "echo");
    expect((await s.request<any>("get", { id: "echo" })).exitCode).toBe(0);
    expect((await s.request<any>("list", {})).map((r: { id: string }) => r.id)).toContain("echo");
    expect(await s.request<any>("list", { state: "finished", key: "schema-key" })).toHaveLength(1);
    const out = await s.request<any>("output", { id: "echo", stream: "stdout", from: 0, maxBytes: 4096 });
    expect(Buffer.from(out.data, "base64").toString()).toBe("out\n");
    expect(out.done).toBe(true);

    // A dev server: every field a dev server's run takes, ready by its line, port and URL; kept when ensured again;
    // its ports in get, list and wait; ready notified to the subscriber.
    writeFileSync(join(storage, "dev.env"), "GREETING=hi\n");
    const port = await freePort();
    const dev = {
      id: "dev", argv: pythonServer(port), cwd: storage, key: "dev", ensure: true, envFile: join(storage, "dev.env"),
      readyLog: "^Serving HTTP", readyPort: port, readyHttp: `http://127.0.0.1:${port}/`, readyTimeoutSeconds: 30, waitReady: true,
      restart: "on-failure", restartMax: 2, restartDelaySeconds: 0.1, restartDelayMaxSeconds: 1,
    };
    const up = await s.request<any>("run", dev);
    expect(up).toMatchObject({ id: "dev", readyAt: expect.any(String), ensured: { outcome: "started" } });
    expect(await s.request<any>("run", { ...dev, id: "dev-again" })).toMatchObject({ id: "dev", ensured: { outcome: "kept" } });
    await notified(s, "ready", (p) => p.id === "dev");
    expect((await s.request<any>("get", { id: "dev" })).ports).toEqual([{ proto: "tcp", address: "127.0.0.1", port }]);
    expect((await s.request<any>("list", { key: "dev" }))[0].ports).toEqual([{ proto: "tcp", address: "127.0.0.1", port }]);
    expect((await s.request<any>("wait", { id: "dev", until: "ready", timeoutMs: 5000 })).readyAt).toBe(up.readyAt);
    expect((await s.request<any>("kill", { id: "dev" })).record.state).toBe("killed");
    await s.request<any>("ack", { id: "dev" });
    expect(await s.request<any>("remove", { ids: ["dev"] })).toEqual(["dev"]);

    // A follow that ends with the task, of both streams.
    const since = s.received.length;
    const { followId } = await s.request<any>("output/follow", { id: "echo", stream: "both", from: 0 });
    const end = await notified(s, "output", (p) => p.followId === followId && p.end === true, since);
    const chunks = s.received.slice(since).filter((m) => m.method === "output").map((m) => m.params as Record<string, unknown>);
    expect(decode(chunks, "stdout")).toBe("out\n");
    expect(decode(chunks, "stderr")).toBe("err\n");
    expect(end.next).toEqual({ stdout: 4, stderr: 4 });

    // A follow ended by the client while its task runs on; a wait that runs out of time.
    // Kept an hour after its end, as an MCP task's TTL asks (and marked one).
    await s.request<any>("run", { id: "long", shell: "echo started; sleep 60", keepAfterEndMs: 3_600_000, mcpTask: true });
    const long = await s.request<any>("output/follow", { id: "long" });
    await notified(s, "output", (p) => p.followId === long.followId && Boolean(p.data));
    expect(await s.request<any>("output/unfollow", { followId: long.followId })).toEqual({ followed: false });
    expect((await s.request<any>("wait", { id: "long", timeoutMs: 50 })).state).toBe("running");

    // A PTY task: written to, resized, its output read, killed.
    await s.request<any>("run", { id: "tty", argv: ["sh", "-c", "stty -echo; read line; stty size; echo got:$line; sleep 60"], pty: { cols: 80, rows: 24 } });
    await waitFor("tty's shell to read", async () => (await s.request<any>("get", { id: "tty" })).commandPid !== undefined);
    expect(await s.request<any>("resize", { id: "tty", cols: 100, rows: 30 })).toEqual({ cols: 100, rows: 30 });
    expect(await s.request<any>("write", { id: "tty", data: "aGVsbG8K", encoding: "base64" })).toEqual({ bytes: 6 });
    await waitFor("tty's answer", async () => Buffer.from((await s.request<any>("output", { id: "tty" })).data, "base64").toString().includes("got:hello"));
    expect(Buffer.from((await s.request<any>("output", { id: "tty" })).data, "base64").toString()).toContain("30 100");
    expect(await s.request<any>("write", { id: "tty", data: "x" })).toEqual({ bytes: 1 });
    const killed = await s.request<any>("kill", { id: "tty", graceMs: 500 });
    expect(killed.record.state).toBe("killed");

    // The census of a real process tree this test started.
    const leader = spawn("sh", ["-c", "sleep 60 & sleep 60 & wait"], { detached: true, stdio: "ignore" });
    leaders.push(leader);
    let census: any;
    const programs = () => census.census?.members.map((m: { process: { argv: string[] } }) => m.process.argv[0]).join(" ");
    // Until each fork has exec'ed, a child is another `sh`.
    await waitFor("the leader's two sleeps in its census", async () => (census = await s.request<any>("census", { pid: leader.pid })) && programs() === "sleep sleep");
    expect(census.ok).toBe(true);
    expect((await s.request<any>("census", { pid: leader.pid, cgroup: "none" })).census.sources.cgroup).toBeNull();
    const reaped = new Promise((resolve) => leader.once("exit", resolve));
    process.kill(-leader.pid!, "SIGKILL");
    await reaped;
    // A leader that is gone: the census answers why it cannot, as a result (ok: false), not an error.
    const gone = await s.request<any>("census", { pid: leader.pid });
    expect(gone).toMatchObject({ ok: false, error: { code: "leader-missing" } });

    // Acknowledged, pruned (tty's completion is not acknowledged yet: kept), removed.
    expect((await s.request<any>("ack", { id: "echo" })).acknowledgedAt).toEqual(expect.any(String));
    const pruned = await s.request<any>("prune", { olderThanSeconds: 0, keep: 0 });
    expect(pruned.removed).toEqual(["echo"]);
    expect(pruned.keptUnacknowledged).toBe(1);
    await s.request<any>("ack", { id: "tty" });
    expect(await s.request<any>("remove", { ids: ["tty"] })).toEqual(["tty"]);

    // Left for the next server: one task to adopt, one that ends while no server runs.
    await s.request<any>("run", { id: "ends-alone", shell: "sleep 1; exit 3" });
    expect(await s.request<any>("completions/unsubscribe", {})).toEqual({ subscribed: false });
    expect(await s.request<any>("drain", { reason: "restart" })).toEqual({ draining: "restart" });
    expect((await s.exited).code).toBe(0);
    await waitFor("ends-alone's exit code, written while no server runs", () => exitCodeWritten(storage, "ends-alone"));

    const next = serve();
    const again = await next.request<any>("initialize", { protocolVersion: "1" });
    expect(again.replay.adopted).toContain("long");
    expect(again.replay.finished).toEqual([expect.objectContaining({ id: "ends-alone", state: "exited", exitCode: 3 })]);
    await next.request<any>("completions/subscribe");
    const alone = await notified(next, "completion", (p) => p.id === "ends-alone");
    expect(alone.exitCode).toBe(3);
    // Ended by its own cancel (as MCP's tasks/cancel asks): the record says when, beside its floor.
    const cancelled = await next.request<any>("kill", { id: "long", cancel: true });
    expect(cancelled.how).toMatch(/^(term|kill)$/);
    expect(cancelled.record).toMatchObject({ state: "killed", cancelledAt: expect.any(String), keepAfterEndMs: 3_600_000, mcpTask: true });

    // A third server on the storage next holds is its client: the same shapes come through the socket.
    const client = serve();
    const asClient = await client.request<any>("initialize", { protocolVersion: "1", clientInfo: { name: "schema-test-client" } });
    expect(asClient.role).toBe("client");
    await client.request("completions/subscribe", {});
    await client.request("run", { id: "via-holder", argv: ["sh", "-c", "echo through; exit 4"] });
    expect((await client.request<any>("wait", { id: "via-holder" })).exitCode).toBe(4);
    await notified(client, "completion", (p) => p.id === "via-holder");
    const follow = await client.request<any>("output/follow", { id: "via-holder" });
    await notified(client, "output", (p) => p.followId === follow.followId && p.end === true);
    expect(Buffer.from((await client.request<any>("output", { id: "via-holder" })).data, "base64").toString()).toBe("through\n");
    await client.request("ack", { id: "via-holder" });
    await client.request("list", { state: "finished" });
    await client.close();
    await next.close();

    const traffic = [s, next, client].map(checkTraffic);
    expect(traffic.flatMap((t) => t.problems)).toEqual([]);
    const called = new Set(traffic.flatMap((t) => [...t.methods]));
    expect(Object.keys(rpcSchema.methods).filter((m) => !called.has(m))).toEqual([]);
    expect([...new Set(traffic.flatMap((t) => [...t.notifications]))].sort()).toEqual(["completion", "output", "ready"]);
  });

  it.skipIf(pythonMissing !== null)("judges the same values alike in another validator: Python's jsonschema", () => {
    expect(judged.filter((j) => j.valid).length).toBeGreaterThan(50);
    expect(judged.filter((j) => !j.valid).length).toBeGreaterThan(5);
    const file = join(inProcess, "judged.json");
    writeFileSync(file, JSON.stringify({ schema: rpcSchemaPath(), judged }));
    const verdicts = JSON.parse(execFileSync("python3", ["-c", PYTHON_JUDGE, file], { encoding: "utf8" })) as boolean[];
    const differ = judged.filter((j, i) => verdicts[i] !== j.valid).map((j) => `${j.pointer}: ajv ${j.valid}, jsonschema ${!j.valid} for ${JSON.stringify(j.value).slice(0, 200)}`);
    expect(differ).toEqual([]);
  });
});

/** Each judged value checked by Python's jsonschema against the same place in the schema, registered under its $id. */
const PYTHON_JUDGE = `
import json, sys, jsonschema, referencing
job = json.load(open(sys.argv[1]))
schema = json.load(open(job["schema"]))
registry = referencing.Registry().with_resource(schema["$id"], referencing.Resource.from_contents(schema))
out = [jsonschema.Draft202012Validator({"$ref": schema["$id"] + "#/" + j["pointer"]}, registry=registry).is_valid(j["value"]) for j in job["judged"]]
print(json.dumps(out))
`;
