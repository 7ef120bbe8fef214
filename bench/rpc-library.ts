// Which JSON-RPC 2.0 implementation carries outlive's wire: json-rpc-2.0
// (transport left to the caller) against vscode-jsonrpc (what VS Code's
// language clients use; it frames with Content-Length, so it gets a line
// reader and writer here, for this bench only). Both carry the same requests
// over the same framing (lib/rpc/lines.ts's LineSplitter, one JSON object a
// line) on the same kind of pipe: a server in a child process on its
// stdin/stdout, a client of the same library here. Measured, interleaved:
// round trips per second one at a time, and with many in flight; then what
// each server does with a bad line (not JSON, not a request, no method, an
// unknown method), and whether it answers the next good one.
// Run: npm run build && node dist/bench/rpc-library.js [--requests 5000] [--rounds 3] [--in-flight 64]
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { performance } from "node:perf_hooks";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { JSONRPCClient, JSONRPCServer } from "json-rpc-2.0";
import {
  AbstractMessageReader,
  AbstractMessageWriter,
  createMessageConnection,
  type DataCallback,
  type Disposable,
  type Message,
  type MessageConnection,
} from "vscode-jsonrpc/node";
import { LineSplitter } from "../lib/rpc/lines.ts";
import { median } from "./quantile.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    requests: { type: "string", default: "5000" },
    rounds: { type: "string", default: "3" },
    "in-flight": { type: "string", default: "64" },
    serve: { type: "string" },
  },
});
const LIBRARIES = ["json-rpc-2.0", "vscode-jsonrpc"] as const;
type Library = (typeof LIBRARIES)[number];
/** The framing's bound, as `outlive serve` has it by default. */
const MAX_LINE_BYTES = 1 << 20;

/** What a `get` answers: a task record of the usual size (about 1.3 KB), so the bench carries what the wire carries. */
const RECORD = {
  schemaVersion: 1, id: "t-0123456789abcdef", key: null, generation: null, command: { shell: "npm run build && npm test", shellPath: "/bin/bash" },
  cwd: "/home/user/project", state: "running", exitCode: null, reason: null, createdAt: "2026-12-02T05:00:00.000Z",
  startedAt: "2026-12-02T05:00:00.012Z", finishedAt: null, lastOutputAt: "2026-12-02T05:00:03.456Z", outputTail: null,
  timeoutSeconds: 3600, deadlineAt: "2026-12-02T06:00:00.000Z", deadlineIsTimeout: true, memoryMaxBytes: null, pid: 123456, pgid: 123456,
  commandPid: 123460, startTime: "987654321", bootId: "0f4e6a1c-9b1d-4c33-8a55-2f7d0e9c1b2a", incarnation: "i-0123456789abcdef",
  supervisorCgroup: "/user.slice/user-1000.slice/user@1000.service/app.slice/outlive.scope", placement: "systemd-scope",
  location: { unit: "outlive-task-t-0123456789abcdef.scope", manager: "user" }, killStartedAt: null, killReason: null, killState: null,
  acknowledgedAt: null, pty: null, maxOutputBytes: 33554432, outputBytes: null, envNames: ["CI", "NODE_ENV"],
};

/** Lines of a stream, each handed on as it is split (the overlong ones as a marker the server answers). */
function onLines(stream: Readable, each: (line: string | null) => void): void {
  const split = new LineSplitter(MAX_LINE_BYTES);
  stream.on("data", (chunk: Buffer) => {
    for (const e of split.push(chunk)) each("line" in e ? e.line : null);
  });
}

/** vscode-jsonrpc's reader for one JSON object a line; a line that is not JSON is reported to the connection as an error. */
class LineMessageReader extends AbstractMessageReader {
  constructor(private readonly stream: Readable) {
    super();
    stream.on("close", () => this.fireClose());
  }

  listen(callback: DataCallback): Disposable {
    onLines(this.stream, (line) => {
      if (line === null) return this.fireError(new Error("a line longer than the bound"));
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch (error) {
        return this.fireError(error);
      }
      callback(message as Message);
    });
    return { dispose: () => this.stream.removeAllListeners("data") };
  }
}

class LineMessageWriter extends AbstractMessageWriter {
  constructor(private readonly stream: Writable) {
    super();
  }

  write(message: Message): Promise<void> {
    return new Promise((resolve, reject) => this.stream.write(`${JSON.stringify(message)}\n`, (e) => (e ? reject(e) : resolve())));
  }

  end(): void {
    this.stream.end();
  }
}

/** The server half, run in the child: `get` answers the record, `echo` its params. */
function serve(library: Library): void {
  if (library === "json-rpc-2.0") {
    const server = new JSONRPCServer();
    server.addMethod("get", () => RECORD);
    server.addMethod("echo", (params) => params);
    const answer = (response: unknown) => response && process.stdout.write(`${JSON.stringify(response)}\n`);
    onLines(process.stdin, async (line) => {
      // json-rpc-2.0 never sees an overlong line: the framing answers it, as outlive's does.
      if (line === null) return answer({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "line too long (the framing's answer)" } });
      // Parsed here and handed over as a value, as lib/rpc/endpoint.ts does (a line may be a response to this end's own request).
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        return answer({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error (the framing's answer)" } });
      }
      answer(await server.receive(value as never));
    });
  } else {
    const connection = createMessageConnection(new LineMessageReader(process.stdin), new LineMessageWriter(process.stdout));
    connection.onRequest("get", () => RECORD);
    connection.onRequest("echo", (params: unknown) => params);
    // What it does with a line the reader could not parse: the reader's error goes here, and nothing goes back.
    connection.onError(() => {});
    connection.listen();
  }
  process.stdin.on("end", () => process.exit(0));
}

/** A client of the same library over a server child's stdio. */
interface Client {
  call(method: string, params?: unknown): Promise<unknown>;
  close(): Promise<void>;
}

function startServer(library: Library): ChildProcessByStdio<Writable, Readable, null> {
  return spawn(process.execPath, [fileURLToPath(import.meta.url), "--serve", library], { stdio: ["pipe", "pipe", "inherit"] });
}

function client(library: Library): Client {
  const child = startServer(library);
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const close = async () => {
    child.stdin.end();
    await exited;
  };
  if (library === "json-rpc-2.0") {
    const c = new JSONRPCClient((request) => {
      child.stdin.write(`${JSON.stringify(request)}\n`);
    });
    onLines(child.stdout, (line) => line !== null && c.receive(JSON.parse(line)));
    return { call: (method, params) => Promise.resolve(c.request(method, params)), close };
  }
  const connection: MessageConnection = createMessageConnection(new LineMessageReader(child.stdout), new LineMessageWriter(child.stdin));
  connection.listen();
  return {
    call: (method, params) => connection.sendRequest(method, params),
    close: async () => {
      connection.dispose();
      await close();
    },
  };
}

/** Round trips per second: `inFlight` callers, each sending its next request once its last was answered. */
async function roundTrips(c: Client, requests: number, inFlight: number): Promise<number> {
  let left = requests;
  const start = performance.now();
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (left-- > 0) await c.call("get", { id: "t-0123456789abcdef" });
  }));
  return requests / ((performance.now() - start) / 1000);
}

/** Sends raw lines to a server and reports what it answered to each, fenced by a good request after it. */
async function badLines(library: Library): Promise<string[]> {
  const child = startServer(library);
  const answers: string[] = [];
  let wake = () => {};
  onLines(child.stdout, (line) => {
    if (line !== null) answers.push(line);
    wake();
  });
  const probes: Array<[string, string]> = [
    ["not JSON", "this is not json"],
    ["not an object", "42"],
    ["no method", '{"jsonrpc":"2.0","id":"p1"}'],
    ["unknown method", '{"jsonrpc":"2.0","id":"p2","method":"nope"}'],
    ["a line over 1 MiB", `{"jsonrpc":"2.0","id":"p3","method":"echo","params":"${"x".repeat(MAX_LINE_BYTES)}"}`],
    // Last: json-rpc-2.0 reads `request.method` of it and throws, which ends a server that does not guard against it.
    ["null", "null"],
  ];
  const report: string[] = [];
  let ended = "";
  child.on("exit", (code, signal) => {
    ended = `and then the server ENDED (code ${code}, signal ${signal})`;
    wake();
  });
  for (const [what, line] of probes) {
    const before = answers.length;
    child.stdin.write(`${line}\n{"jsonrpc":"2.0","id":"fence","method":"echo","params":{}}\n`);
    const deadline = Date.now() + 5000;
    while (!ended && !answers.slice(before).some((a) => a.includes('"fence"')) && Date.now() < deadline) await new Promise<void>((r) => (wake = r, setTimeout(r, 100)));
    // A server that throws on the line dies a moment after answering the fence (the throw is a rejected promise): give it that moment.
    await new Promise((r) => setTimeout(r, 200));
    const got = answers.slice(before).filter((a) => !a.includes('"fence"'));
    const fenced = answers.slice(before).some((a) => a.includes('"fence"'));
    report.push(`  ${library.padEnd(14)} ${what.padEnd(18)} → ${got.length ? got.map((a) => a.slice(0, 110)).join(" | ") : "no answer"}; next request ${fenced ? "answered" : "NOT answered"}${ended ? `: ${ended}` : ""}`);
    if (ended) break;
  }
  if (!ended) {
    child.stdin.end();
    await new Promise<void>((resolve) => child.on("exit", () => resolve()));
  }
  return report;
}

async function main(): Promise<void> {
  const requests = Number(values.requests);
  const rounds = Number(values.rounds);
  const inFlight = Number(values["in-flight"]);
  const rates: Record<Library, { one: number[]; many: number[] }> = { "json-rpc-2.0": { one: [], many: [] }, "vscode-jsonrpc": { one: [], many: [] } };
  for (let round = 0; round < rounds; round++) {
    // Interleaved, the order turned each round, so a burst of load on the machine falls on both.
    for (const library of round % 2 === 0 ? LIBRARIES : [...LIBRARIES].reverse()) {
      const c = client(library);
      await roundTrips(c, 200, 1); // warm-up: the child's JIT, the pipe's buffers
      rates[library].one.push(await roundTrips(c, requests, 1));
      rates[library].many.push(await roundTrips(c, requests, inFlight));
      await c.close();
    }
  }
  const [a, b] = LIBRARIES;
  for (const [name, key] of [["one at a time", "one"], [`${inFlight} in flight`, "many"]] as const) {
    const ra = median(rates[a][key]);
    const rb = median(rates[b][key]);
    console.log(
      `rpc-library, ${name.padEnd(13)}: ${a} ${Math.round(ra)} round trips/s, ${b} ${Math.round(rb)} round trips/s (median of ${rounds} rounds of ${requests}); ` +
        `${b} / ${a} = ${(rb / ra).toFixed(2)}x`,
    );
  }
  console.log("what each server does with a bad line (then a good request):");
  for (const library of LIBRARIES) for (const line of await badLines(library)) console.log(line);
}

if (values.serve !== undefined) {
  if (!LIBRARIES.includes(values.serve as Library)) throw new Error(`Expected --serve to be one of ${LIBRARIES.join(", ")}, got ${values.serve}`);
  serve(values.serve as Library);
} else {
  await main();
}
