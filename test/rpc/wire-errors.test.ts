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
import { ServeProcess, type WireMessage } from "../support/serve.ts";
import { waitFor } from "../support/wait.ts";

const { dir: storage, remove } = tempDir("outlive-rpc-wire-errors-");
const servers: ServeProcess[] = [];
let s: ServeProcess;

/** Every task's directory and record, as bytes: what "nothing stored changed" compares. */
function stored(): string {
  const tasks = join(storage, "tasks");
  return readdirSync(tasks).sort().map((id) => {
    const record = join(tasks, id, "record.json");
    return `${id}\n${existsSync(record) ? readFileSync(record, "utf8") : "(no record)"}`;
  }).join("\n");
}

async function started(extraArgs: string[] = []): Promise<ServeProcess> {
  const server = new ServeProcess(storage, extraArgs);
  servers.push(server);
  return server;
}

/** The error of a response, checked against the schema's error response; fails on a result. */
function errorOf(response: WireMessage): { code: number; message: string; data?: Record<string, unknown> } {
  const { line: _, ...message } = response;
  expect(schemaProblem("$defs/ErrorResponse", message)).toBeNull();
  return response.error!;
}

/** The server is alive and answers a good request, and the storage is as it was. */
async function stillWell(server: ServeProcess, before: string): Promise<void> {
  expect(server.child.exitCode).toBeNull();
  expect((await server.call("get", { id: "done" })).state).toBe("exited");
  expect(stored()).toBe(before);
}

/** The response to the raw `line`: the next message after it with the given id. */
async function answerTo(server: ServeProcess, line: string, id: unknown): Promise<WireMessage> {
  const from = server.received.length;
  server.writeLine(line);
  return server.until(`the answer to ${line.slice(0, 80)}`, (m) => m.id === id && m.method === undefined, 30_000, from);
}

beforeAll(async () => {
  s = await started();
  await s.call("initialize", { protocolVersion: "1" });
  // What the storage holds while the bad input arrives: a finished task and a live one (quiet, its record settled).
  await s.call("run", { id: "done", argv: ["true"] });
  await s.call("wait", { id: "done" });
  await s.call("run", { id: "live", argv: ["sleep", "600"] });
  await waitFor("live's record to settle", async () => (await s.call("get", { id: "live" })).commandPid !== undefined);
});

afterAll(async () => {
  try {
    await s.call("kill", { id: "live", graceMs: 200 });
  } finally {
    for (const server of servers) await server.stop();
    remove();
  }
});

describe("lines that are not requests", () => {
  it.each([
    ["not JSON", "this is not json", -32700],
    ["JSON cut short", '{"jsonrpc":"2.0","id":1,"method":"get"', -32700],
    ["a number", "42", -32600],
    ["a string", '"get"', -32600],
    ["an empty batch", "[]", -32600],
    ["null", "null", -32600],
  ])("%s: %i with id null, and the server reads on", async (_what, line, code) => {
    const before = stored();
    const error = errorOf(await answerTo(s, line, null));
    expect(error.code).toBe(code);
    await stillWell(s, before);
  });

  it.each([
    ["no method", { jsonrpc: "2.0", id: 71 }],
    ["a method that is not a string", { jsonrpc: "2.0", id: 72, method: 7 }],
    ["another jsonrpc version", { jsonrpc: "1.0", id: 73, method: "get", params: { id: "done" } }],
    ["params that are neither object nor array", { jsonrpc: "2.0", id: 74, method: "get", params: "done" }],
  ])("%s: -32600", async (_what, request) => {
    const before = stored();
    const from = s.received.length;
    s.writeLine(JSON.stringify(request));
    const answer = await s.until("the answer", (m) => m.method === undefined && (m.id === request.id || m.id === null), 30_000, from);
    expect(errorOf(answer).code).toBe(-32600);
    await stillWell(s, before);
  });

  it("a line longer than the default bound (1 MiB): -32600, the rest of the line skipped, the next line read", async () => {
    const before = stored();
    const line = JSON.stringify({ jsonrpc: "2.0", id: 80, method: "run", params: { id: "huge", shell: `echo ${"x".repeat(1 << 20)}` } });
    // The id is in the part of the line that was never read: the answer's id is null.
    const answer = await answerTo(s, line, null);
    expect(errorOf(answer).code).toBe(-32600);
    expect(errorOf(answer).message).toMatch(/1048576|1 MiB|bound|long/i);
    await stillWell(s, before);
  });

  it("--max-line-bytes sets the bound: a line over it is refused, one under it answered", async () => {
    const small = await started(["--max-line-bytes", "4096"]);
    await small.call("initialize", { protocolVersion: "1" });
    const before = stored();
    const over = JSON.stringify({ jsonrpc: "2.0", id: 1001, method: "get", params: { id: "done", pad: "x".repeat(5000) } });
    const answer = await answerTo(small, over, null);
    expect(errorOf(answer).code).toBe(-32600);
    expect(errorOf(answer).message).toMatch(/4096/);
    await stillWell(small, before);
    await small.stop();
  });

  it("--max-line-bytes that is not a positive whole number is refused at start, naming it", async () => {
    const bad = await started(["--max-line-bytes", "lots"]);
    const { code } = await bad.exit;
    expect(code).not.toBe(0);
    expect(bad.stderr).toMatch(/--max-line-bytes/);
    expect(bad.stderr).toMatch(/lots/);
  });
});

describe("methods", () => {
  it("an unknown method: -32601 naming it", async () => {
    const before = stored();
    const error = errorOf(await s.request("tasks/explode", {}));
    expect(error.code).toBe(-32601);
    expect(error.message).toMatch(/tasks\/explode/);
    await stillWell(s, before);
  });

  it("a method before initialize: -32002, E_NOT_INITIALIZED; initialize then works", async () => {
    const fresh = await started();
    const before = stored();
    for (const [method, params] of [["get", { id: "done" }], ["run", { argv: ["true"] }], ["completions/subscribe", {}]] as const) {
      const error = errorOf(await fresh.request(method, params));
      expect(error.code).toBe(-32002);
      expect(error.data?.code).toBe("E_NOT_INITIALIZED");
    }
    expect(stored()).toBe(before);
    expect((await fresh.call("initialize", { protocolVersion: "1" })).protocolVersion).toBe("1");
    await stillWell(fresh, before);
    await fresh.stop();
  });

  it.each([
    ["an unknown protocolVersion", { protocolVersion: "2" }],
    ["a protocolVersion that is a number", { protocolVersion: 1 }],
    ["no protocolVersion", {}],
  ])("initialize with %s is refused with the versions the server speaks; a right one then works", async (_what, params) => {
    const fresh = await started();
    const error = errorOf(await fresh.request("initialize", params));
    expect(error.code).toBe(-32602);
    expect(error.data).toMatchObject({ code: "E_PROTOCOL_VERSION", supported: ["1"] });
    expect(error.message).toMatch(/protocolVersion/);
    expect(schemaProblem(at("methods", "initialize", "params"), params)).not.toBeNull();
    // Refused, not initialized: still the one request allowed.
    expect(errorOf(await fresh.request("get", { id: "done" })).code).toBe(-32002);
    expect((await fresh.call("initialize", { protocolVersion: "1" })).protocolVersion).toBe("1");
    await fresh.stop();
  });
});

/** [method, params, the param the error must name]: one case for each param each method checks. */
const BAD_PARAMS: Array<[string, Record<string, unknown>, string]> = [
  ["run", {}, "argv"],
  ["run", { argv: ["true"], shell: "true" }, "argv"],
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
  ["output/follow", { id: "done", stream: "all" }, "stream"],
  ["output/follow", { id: "done", from: { stdin: 0 } }, "from"],
  ["output/unfollow", {}, "followId"],
  ["drain", { reason: "later" }, "reason"],
];

describe("bad params: -32602 naming the param and what was expected; E_BAD_OPTION; nothing stored changed", () => {
  it.each(BAD_PARAMS)("%s %j names %s", async (method, params, param) => {
    expect(schemaProblem(at("methods", method, "params"), params)).not.toBeNull();
    const before = stored();
    const error = errorOf(await s.request(method, params));
    expect(error.code).toBe(-32602);
    expect(error.data?.code).toMatch(/^E_BAD_(OPTION|ID)$/);
    expect(error.data?.param).toBe(param);
    expect(error.message).toContain(param.split(".").pop());
    expect(error.message).toMatch(/[Ee]xpected/);
    await stillWell(s, before);
  });
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
    ["remove of a live task", "remove", { ids: ["done", "live"] }, "E_TASK_LIVE"],
    ["write to a task without a terminal", "write", { id: "live", data: "x" }, "E_NOT_PTY"],
    ["resize of a task without a terminal", "resize", { id: "live", cols: 80, rows: 24 }, "E_NOT_PTY"],
    ["run of a program that is not there", "run", { argv: ["/nonexistent/program"] }, "E_NOT_FOUND"],
    ["run of a file that cannot be run", "run", { argv: [notExecutable] }, "E_NOT_EXECUTABLE"],
    ["run under the id of a task there", "run", { id: "done", argv: ["true"] }, "E_"],
  ])("%s", async (_what, method, params, code) => {
    const before = stored();
    const error = errorOf(await s.request(method, params));
    expect(error.code).toBe(-32000);
    expect(String(error.data?.code)).toMatch(new RegExp(`^${code}`));
    expect(error.message.length).toBeGreaterThan(10);
    await stillWell(s, before);
  });
});
