import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
// Deno reads the SDK's types from these paths: its package maps `./*` to `*.d.ts`, which for a
// `.js` subpath names `mcp.js.d.ts`; tsc finds `mcp.d.ts` anyway, Deno's check does not. Types only.
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp.d.ts"
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/server/streamableHttp.d.ts"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/types.d.ts"
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { checkDoor, doorPolicy } from "./door-checks.ts";
import { hostPort, isLoopback, type HttpAddress } from "./http-address.ts";
import { OutliveError } from "../errors.ts";
import { DEFAULT_MAX_LINE_BYTES } from "../rpc/protocol.ts";

/** The path the MCP endpoint answers on; every other path is 404. */
export const MCP_PATH = "/mcp";


export interface HttpDoorOptions {
  address: HttpAddress;
  /** The bearer token every request must carry (token-file.ts). */
  token: string;
  /** A fresh MCP server for each MCP session (the SDK connects one server to one transport). */
  newServer: () => McpServer;
  /** A larger request body is refused unread (413); default the wire's line bound, DEFAULT_MAX_LINE_BYTES. */
  maxRequestBytes?: number;
  log?: (line: string) => void;
}

export interface HttpDoor {
  /** The endpoint's URL, with the port the system picked when the address said 0. */
  url: string;
  close(): Promise<void>;
}

/**
 * `outlive mcp --http`: MCP's Streamable HTTP transport on a loopback
 * address, behind a door (door-checks.ts) that turns away a request whose
 * Host or Origin is not the bound address or that lacks the bearer token,
 * before the MCP layer sees a byte of it. Each MCP session (an
 * `initialize` without a session id) gets its own server and transport,
 * all over the same supervisor session.
 *
 * @example
 * ```ts
 * import { openHttpDoor } from "./http-door.ts";
 * import { mcpServer } from "./server.ts";
 * const limits = { waitDefaultSeconds: 30, waitMaxSeconds: 50, outputDefaultBytes: 16384, cwd: "/" };
 * const newServer = () => mcpServer(async () => [], { version: "0.1.0", limits });
 * const door = await openHttpDoor({ address: { host: "127.0.0.1", port: 0 }, token: "a-long-enough-token", newServer });
 * console.log(door.url.startsWith("http://127.0.0.1:")); // true
 * await door.close();
 * ```
 */
export async function openHttpDoor(options: HttpDoorOptions): Promise<HttpDoor> {
  const { address, token, newServer } = options;
  // The address is checked where it is parsed too; a caller of the library gets the same refusal.
  if (!isLoopback(address.host)) throw new OutliveError("E_BAD_OPTION", `the HTTP door binds loopback addresses only, got ${address.host}`);
  const maxRequestBytes = options.maxRequestBytes ?? DEFAULT_MAX_LINE_BYTES;
  const log = options.log ?? (() => {});
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let policy = doorPolicy(address.host, address.port, token);

  const http = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      log(`outlive mcp: a request failed: ${(error as Error).message}`);
      if (!res.headersSent) answer(res, 500, "internal error");
      else res.end();
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refusal = checkDoor({ host: req.headers.host, origin: req.headers.origin, authorization: req.headers.authorization }, policy);
    if (refusal) {
      req.resume();
      return answer(res, refusal.status, refusal.message, refusal.headers);
    }
    if (new URL(req.url ?? "/", "http://door").pathname !== MCP_PATH) {
      req.resume();
      return answer(res, 404, `no such path; the MCP endpoint is ${MCP_PATH}`);
    }
    const sessionId = header(req, "mcp-session-id");
    if (req.method === "POST") {
      const body = await readBody(req, maxRequestBytes);
      if (!body.ok) return rpcError(res, body.status, body.code, body.message);
      const known = sessionId === undefined ? undefined : sessions.get(sessionId);
      if (known) return known.handleRequest(req, res, body.value);
      if (sessionId === undefined && isInitializeRequest(body.value)) return startSession(req, res, body.value);
      return rpcError(res, sessionId === undefined ? 400 : 404, -32000, sessionId === undefined ? "expected an initialize request, or an Mcp-Session-Id header" : `no session ${sessionId} (it ended, or the server restarted): initialize again`);
    }
    req.resume();
    const known = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (!known) return answer(res, sessionId === undefined ? 400 : 404, sessionId === undefined ? "expected an Mcp-Session-Id header" : `no session ${sessionId}`);
    return known.handleRequest(req, res);
  }

  async function startSession(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await newServer().connect(transport);
    await transport.handleRequest(req, res, body);
  }

  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(address.port, address.host, () => {
      http.off("error", reject);
      resolve();
    });
  });
  const bound = http.address();
  const port = typeof bound === "object" && bound !== null ? bound.port : address.port;
  policy = doorPolicy(address.host, port, token);
  return {
    url: `http://${hostPort(address.host, port)}${MCP_PATH}`,
    async close() {
      await Promise.allSettled([...sessions.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

type Body = { ok: true; value: unknown } | { ok: false; status: number; code: number; message: string };

/** The request's JSON body, read up to `max` bytes; a longer one is refused without reading the rest. */
async function readBody(req: IncomingMessage, max: number): Promise<Body> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > max) {
    req.resume();
    return { ok: false, status: 413, code: -32600, message: `the request body is ${declared} bytes; at most ${max} are read (--max-line-bytes)` };
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) {
      req.destroy();
      return { ok: false, status: 413, code: -32600, message: `the request body is over ${max} bytes (--max-line-bytes)` };
    }
    chunks.push(chunk);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString("utf8")) };
  } catch (error) {
    return { ok: false, status: 400, code: -32700, message: `the request body is not JSON: ${(error as Error).message}` };
  }
}

function answer(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8", ...headers }).end(`${message}\n`);
}

function rpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}
