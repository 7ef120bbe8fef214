// Every kind of bad input, sent on the wire to the built `outlive serve` in a
// process of its own: lines that are not JSON or not requests, lines over the
// bound, unknown methods, bad params for each method, a method before
// `initialize`, a protocol version the server does not speak, and outlive's
// own failures. Each answer is the JSON-RPC error the protocol names (checked
// against the published schema too), the server answers the next request,
// and nothing stored changed: the storage's files are compared before and after.
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../support/cli.ts";
import { at, schemaProblem } from "../support/rpc-schema.ts";
import { ServeChild, type WireError } from "../support/serve-child.ts";
import { waitFor } from "../support/wait.ts";

const { dir: storage, remove } = tempDir("outlive-rpc-wire-errors-");
const servers: ServeChild[] = [];
let s: ServeChild;

/** Every task's directory and record, as bytes: what "nothing stored changed" compares. */
function stored(): string {
  const tasks = join(storage, "tasks");
  return readdirSync(tasks).sort().map((id) => {
    const record = join(tasks, id, "record.json");
    return `${id}\n${existsSync(record) ? readFileSync(record, "utf8") : "(no record)"}`;
  }).join("\n");
}

/** `outlive serve` on the test's storage, in standalone mode (process groups, which every machine has). */
function started(extraArgs: string[] = []): ServeChild {
  const server = new ServeChild(["--stdio", "--storage", storage, "--mode", "standalone", ...extraArgs]);
  servers.push(server);
  return server;
}

/** `p`, or a failure naming what serve said as it died, should it end first (a bad line must never end it). */
function whileAlive<T>(server: ServeChild, p: Promise<T>): Promise<T> {
  const died = server.exited.then(({ code, signal }) => {
    throw new Error(`outlive serve ended (code ${code}, signal ${signal}); its stderr ends: ${server.stderr.slice(-1500)}`);
  });
  return Promise.race([p, died]);
}

/** An error response's error object, checked against the schema's error response; fails on a result. */
function checked(response: Record<string, unknown>): WireError {
  expect(schemaProblem("$defs/ErrorResponse", response)).toBeNull();
  return response.error as WireError;
}

/** The error a request is answered with (the whole response checked against the schema). */
async function errorOf(server: ServeChild, method: string, params?: unknown): Promise<WireError> {
  const outcome = await whileAlive(server, server.request(method, params).then((result) => ({ result }), (error: WireError) => ({ error })));
  if (!("error" in outcome)) throw new Error(`${method} ${JSON.stringify(params)} was answered with a result: ${JSON.stringify(outcome.result).slice(0, 300)}`);
  const id = (server.sent[server.sent.length - 1] as { id: number }).id;
  return checked(server.received.findLast((m) => m.id === id && !("method" in m))!);
}

/** The server is alive and answers a good request, and the storage is as it was. */
async function stillWell(server: ServeChild, before: string): Promise<void> {
  expect(server.child.exitCode).toBeNull();
  expect((await whileAlive(server, server.request<{ state: string }>("get", { id: "done" }))).state).toBe("exited");
  expect(stored()).toBe(before);
}

/** The error answering the raw `line`: the first response after it whose id is `id`. */
async function answerTo(server: ServeChild, line: string, id: unknown): Promise<WireError> {
  const from = server.received.length;
  server.sendLine(line);
  return checked(await whileAlive(server, server.until(() => server.received.slice(from).find((m) => m.id === id && !("method" in m)))));
}

beforeAll(async () => {
  s = started();
  await s.initialize();
  // What the storage holds while the bad input arrives: a finished task and a live one (quiet, its record settled).
  await s.request<any>("run", { id: "done", argv: ["true"] });
  await s.request<any>("wait", { id: "done" });
  await s.request<any>("run", { id: "live", argv: ["sleep", "600"] });
  await waitFor("live's record to settle", async () => (await s.request<any>("get", { id: "live" })).commandPid !== undefined);
});

afterAll(async () => {
  try {
    await s.request<any>("kill", { id: "live", graceMs: 200 });
  } finally {
    for (const server of servers) if (server.child.exitCode === null) await server.close();
    remove();
  }
});

describe("lines that are not requests", () => {
  it.each([
    ["not JSON", "this is not json", -32700],
    ["JSON cut short", '{"jsonrpc":"2.0","id":"raw-1","method":"get"', -32700],
    ["a number", "42", -32600],
    ["a string", '"get"', -32600],
    ["an empty batch", "[]", -32600],
    ["null", "null", -32600],
    ["true", "true", -32600],
    ["a batch of null", "[null]", -32600],
    ["a batch of a number", "[1]", -32600],
  ])("%s: %s with id null, and the server reads on", async (_what, line, code) => {
    const before = stored();
    expect((await answerTo(s, line, null)).code).toBe(code);
    await stillWell(s, before);
  });

  it.each([
    ["no method", { jsonrpc: "2.0", id: "raw-71" }],
    ["a method that is not a string", { jsonrpc: "2.0", id: "raw-72", method: 7 }],
    ["another jsonrpc version", { jsonrpc: "1.0", id: "raw-73", method: "get", params: { id: "done" } }],
    ["no jsonrpc", { id: "raw-74", method: "list" }],
    ["an id that is an object", { jsonrpc: "2.0", id: { a: 1 }, method: "list" }],
  ])("%s: -32600", async (_what, request) => {
    const before = stored();
    // The id of a request that is not one may be read or not: null or its own.
    const from = s.received.length;
    s.sendLine(JSON.stringify(request));
    const answer = await whileAlive(s, s.until(() => s.received.slice(from).find((m) => !("method" in m) && (m.id === request.id || m.id === null))));
    expect(checked(answer).code).toBe(-32600);
    await stillWell(s, before);
  });

  it("a line longer than the default bound (1 MiB): -32600, the rest of the line skipped, the next line read", async () => {
    const before = stored();
    const line = JSON.stringify({ jsonrpc: "2.0", id: "raw-80", method: "run", params: { id: "huge", shell: `echo ${"x".repeat(1 << 20)}` } });
    // The id is in the part of the line that was never read: the answer's id is null.
    const error = await answerTo(s, line, null);
    expect(error.code).toBe(-32600);
    expect(error.message).toMatch(/1048576/);
    await stillWell(s, before);
  });

  it("--max-line-bytes sets the bound: a line over it is refused, one under it answered", async () => {
    const small = started(["--max-line-bytes", "4096"]);
    await small.initialize();
    const before = stored();
    const over = JSON.stringify({ jsonrpc: "2.0", id: "raw-1001", method: "get", params: { id: "done", pad: "x".repeat(5000) } });
    const error = await answerTo(small, over, null);
    expect(error.code).toBe(-32600);
    expect(error.message).toMatch(/4096/);
    await stillWell(small, before);
    await small.close();
  });

  it("--max-line-bytes that is not a positive whole number is refused at start, naming it", async () => {
    const bad = started(["--max-line-bytes", "lots"]);
    const { code } = await bad.exited;
    await bad.closed;
    expect(code).not.toBe(0);
    expect(bad.stderr).toMatch(/--max-line-bytes/);
    expect(bad.stderr).toMatch(/lots/);
  });
});

describe("methods", () => {
  it("an unknown method: -32601 naming it", async () => {
    const before = stored();
    const error = await errorOf(s, "tasks/explode", {});
    expect(error.code).toBe(-32601);
    expect(error.message).toMatch(/tasks\/explode/);
    await stillWell(s, before);
  });

  it("a method before initialize: -32002, E_NOT_INITIALIZED; initialize then works", async () => {
    const fresh = started();
    const before = stored();
    for (const [method, params] of [["get", { id: "done" }], ["run", { argv: ["true"] }], ["completions/subscribe", {}]] as const) {
      const error = await errorOf(fresh, method, params);
      expect(error.code).toBe(-32002);
      expect(error.data?.code).toBe("E_NOT_INITIALIZED");
    }
    expect(stored()).toBe(before);
    expect((await fresh.initialize()).protocolVersion).toBe("1");
    await stillWell(fresh, before);
    await fresh.close();
  });

  it("a second initialize on a connection is refused (-32600), and the first still holds", async () => {
    const before = stored();
    const error = await errorOf(s, "initialize", { protocolVersion: "1" });
    expect(error.code).toBe(-32600);
    expect(error.message).toMatch(/initialize/);
    await stillWell(s, before);
  });

  it.each([
    ["an unknown protocolVersion", { protocolVersion: "2" }],
    ["a protocolVersion that is a number", { protocolVersion: 1 }],
    ["no protocolVersion", {}],
  ])("initialize with %s is refused with the versions the server speaks; a right one then works", async (_what, params) => {
    const fresh = started();
    const error = await errorOf(fresh, "initialize", params);
    expect(error.code).toBe(-32602);
    expect(error.data).toMatchObject({ code: "E_PROTOCOL_VERSION", supported: ["1"] });
    expect(error.data?.param).toBe("protocolVersion");
    expect(error.message).toMatch(/"1"/);
    expect(schemaProblem(at("methods", "initialize", "params"), params)).not.toBeNull();
    // Refused, not initialized: still the one request allowed.
    expect((await errorOf(fresh, "get", { id: "done" })).code).toBe(-32002);
    expect((await fresh.initialize()).protocolVersion).toBe("1");
    await fresh.close();
  });
});

/** [method, params, the param the error must name]: one case for each param each method checks. */
const BAD_PARAMS: Array<[string, Record<string, unknown>, string]> = [
  ["run", {}, "argv / shell"],
  ["run", { argv: ["true"], shell: "true" }, "argv / shell"],
  ["run", { argv: "true" }, "argv"],
  ["run", { argv: [] }, "argv"],
  ["run", { shell: "" }, "shell"],
  ["run", { shell: "true", shellPath: "sh" }, "shellPath"],
  ["run", { shell: "true", id: "../etc" }, "id"],
  ["run", { shell: "true", cwd: "relative/dir" }, "cwd"],
  ["run", { shell: "true", env: { A: 1 } }, "env"],
  ["run", { shell: "true", key: "" }, "key"],
  ["run", { shell: "true", timeoutSeconds: -1 }, "timeoutSeconds"],
  ["run", { shell: "true", memoryMaxBytes: 10 }, "memoryMaxBytes"],
  ["run", { shell: "true", maxOutputBytes: 5 }, "maxOutputBytes"],
  ["run", { shell: "true", pty: { cols: 0 } }, "pty.cols"],
  ["get", {}, "id"],
  ["get", "done" as never, "params"],
  ["get", { id: "done", idd: "done" }, "idd"],
  ["run", { shell: "true", timeout: 5 }, "timeout"],
  ["get", { id: 5 }, "id"],
  ["get", { id: "Not An Id" }, "id"],
  ["list", { state: "sleeping" }, "state"],
  ["list", { key: 3 }, "key"],
  ["kill", { id: "live", graceMs: -5 }, "graceMs"],
  ["wait", { id: "done", timeoutMs: "soon" }, "timeoutMs"],
  ["ack", {}, "id"],
  ["remove", { ids: "done" }, "ids"],
  ["remove", { ids: [3] }, "ids"],
  ["prune", { keep: -1 }, "keep"],
  ["prune", { olderThanSeconds: "old" }, "olderThanSeconds"],
  ["prune", { unacknowledged: "yes" }, "unacknowledged"],
  ["output", { id: "done", stream: "stdin" }, "stream"],
  ["output", { id: "done", from: -1 }, "from"],
  ["output", { id: "done", maxBytes: 2_000_000 }, "maxBytes"],
  ["write", { id: "live" }, "data"],
  ["write", { id: "live", data: "x", encoding: "hex" }, "encoding"],
  ["resize", { id: "live", cols: 0, rows: 10 }, "cols"],
  ["resize", { id: "live", cols: 80 }, "rows"],
  ["census", {}, "pid"],
  ["census", { pid: "one" }, "pid"],
  ["census", { pid: 1, cgroup: 7 }, "cgroup"],
  ["completions/subscribe", { all: true }, "all"],
  ["completions/unsubscribe", { now: 1 }, "now"],
  ["output/follow", { id: "done", stream: "all" }, "stream"],
  ["output/follow", { id: "done", from: { stdin: 0 } }, "from"],
  ["output/unfollow", {}, "followId"],
  ["drain", { reason: "later" }, "reason"],
];

describe("bad params: -32602 naming the param and what was expected; E_BAD_OPTION; nothing stored changed", () => {
  it.each(BAD_PARAMS)("%s %j names %s", async (method, params, param) => {
    expect(schemaProblem(at("methods", method, "params"), params)).not.toBeNull();
    const before = stored();
    const error = await errorOf(s, method, params);
    expect(error.code).toBe(-32602);
    expect(error.data?.code).toMatch(/^E_BAD_(OPTION|ID)$/);
    expect(error.data?.param).toBe(param);
    expect(error.message).toContain(param);
    expect(error.message).toMatch(/[Ee]xpected/);
    await stillWell(s, before);
  });
});

it("run under the id of a task there: -32602, E_BAD_ID naming id; the task there is untouched", async () => {
  const before = stored();
  const error = await errorOf(s, "run", { id: "done", argv: ["true"] });
  expect(error.code).toBe(-32602);
  expect(error.data).toMatchObject({ code: "E_BAD_ID", param: "id" });
  expect(error.message).toMatch(/"done" already exists/);
  await stillWell(s, before);
});

describe("outlive's own failures: -32000 with data.code; nothing stored changed", () => {
  const notExecutable = join(storage, "not-executable");
  beforeAll(() => {
    writeFileSync(notExecutable, "#!/bin/sh\n");
    chmodSync(notExecutable, 0o644);
  });

  it.each([
    ["get of a task that is not there", "get", { id: "nobody" }, "E_NO_TASK"],
    ["kill of a task that is not there", "kill", { id: "nobody" }, "E_NO_TASK"],
    ["output of a task that is not there", "output", { id: "nobody" }, "E_NO_TASK"],
    ["wait for a task that is not there", "wait", { id: "nobody" }, "E_NO_TASK"],
    ["ack of a task that is not there", "ack", { id: "nobody" }, "E_NO_TASK"],
    ["ack of a live task", "ack", { id: "live" }, "E_TASK_LIVE"],
    ["remove of a live task", "remove", { ids: ["done", "live"] }, "E_TASK_LIVE"],
    ["remove of a task that is not there", "remove", { ids: ["done", "nobody"] }, "E_NO_TASK"],
    ["follow of a task that is not there", "output/follow", { id: "nobody" }, "E_NO_TASK"],
    ["unfollow of a follow that is not there", "output/unfollow", { followId: "f-nobody" }, "E_"],
    ["write to a task without a terminal", "write", { id: "live", data: "x" }, "E_NOT_PTY"],
    ["resize of a task without a terminal", "resize", { id: "live", cols: 80, rows: 24 }, "E_NOT_PTY"],
    ["run of a program that is not there", "run", { argv: ["/nonexistent/program"] }, "E_NOT_FOUND"],
    ["run of a file that cannot be run", "run", { argv: [notExecutable] }, "E_NOT_EXECUTABLE"],
  ])("%s", async (_what, method, params, code) => {
    const before = stored();
    const error = await errorOf(s, method, params);
    expect(error.code).toBe(-32000);
    expect(String(error.data?.code)).toMatch(new RegExp(`^${code}`));
    expect(error.message.length).toBeGreaterThan(10);
    await stillWell(s, before);
  });
});
