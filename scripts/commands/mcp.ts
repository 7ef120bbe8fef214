import { join } from "node:path";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { parseHttpAddress, type HttpAddress } from "../../lib/mcp/http-address.ts";
import { mcpServer } from "../../lib/mcp/server.ts";
import { guardedLines } from "../../lib/mcp/stdio-lines.ts";
import { loadToken } from "../../lib/mcp/token-file.ts";
import { DEFAULT_TOOL_LIMITS, type ToolLimits } from "../../lib/mcp/tools.ts";
import { DEFAULT_MAX_LINE_BYTES } from "../../lib/rpc/protocol.ts";
import { openSession } from "../../lib/session/session.ts";
import { defaultStorageRoot } from "../../lib/store/storage/storage-root.ts";
import { outliveVersion } from "../../lib/version.ts";
import { help, number, parseFlags, seconds } from "../cli/flags.ts";
import { lockWaitMs, SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP } from "../cli/supervisor-flags.ts";
import { UsageError } from "../cli/usage-error.ts";
import { serverOptions } from "./serve.ts";

/** The token file under the storage when --token-file names none: beside the control socket, in the owner's 0700 directory. */
const TOKEN_FILE = join("control", "mcp-token");

export const MCP_HELP = `usage: outlive mcp [--http 127.0.0.1:PORT [--token-file FILE]] [--storage DIR] [--mode MODE] [--placement NAME] [--lock-wait DURATION]

An MCP server whose tools run durable background tasks for an agent (Claude Code, Codex,
any MCP client): run_task, list_tasks, get_task, task_output, wait_task, kill_task,
send_input, ack_task. Its tasks outlive the agent's harness and this server; the next
server finds them again. A client may also call run_task as an MCP task (protocol
2025-11-25): its handle is the task's id, and tasks/get, tasks/result, tasks/list and
tasks/cancel answer for it from any later server on the storage. It speaks MCP on
stdin/stdout (start it as the agent's MCP server), or with --http on Streamable HTTP at
http://ADDRESS/mcp. Several servers may share a storage: the first holds it, the others
go through its control socket.
  --http ADDRESS        serve Streamable HTTP on ADDRESS: 127.0.0.1:PORT, [::1]:PORT or localhost:PORT
                        (loopback only; PORT 0 picks a free one, said on stderr). Every request must carry
                        Authorization: Bearer TOKEN, and a Host (and Origin, if any) naming that address
  --token-file FILE     the bearer token for --http (default STORAGE/${TOKEN_FILE}; made with mode 0600
                        holding a random token when absent; refused when a symlink, another user's, or
                        readable or writable by group or others)
  --max-line-bytes N    the largest request taken, a line on stdio or a body over HTTP; a longer line is
                        answered -32600 and skipped, a larger body 413 (default ${DEFAULT_MAX_LINE_BYTES})
  --wait-default DURATION  wait_task's timeout when the call gives none (default ${DEFAULT_TOOL_LIMITS.waitDefaultSeconds}s, or --wait-max if lower)
  --wait-max DURATION   the longest wait_task may wait in one call; keep it below your client's tool
                        timeout (default ${DEFAULT_TOOL_LIMITS.waitMaxSeconds}s; Codex's default tool timeout is 60 s)
  --output-bytes N      task_output's chunk when the call gives none (default ${DEFAULT_TOOL_LIMITS.outputDefaultBytes})
Tasks start in the directory outlive mcp was started in unless run_task names a cwd.
${SUPERVISOR_FLAGS_HELP.replace("(default $OUTLIVE_MODE, else standalone)", "(default $OUTLIVE_MODE, else daemon: an agent's tasks must outlive its harness's cgroup)").replace(/\n {2}--json[^\n]*/, "")}`;

const { json: _json, ...STORAGE_FLAGS } = SUPERVISOR_FLAGS;

export async function mcpCommand(args: string[]): Promise<number> {
  const { values } = parseFlags(args, {
    ...STORAGE_FLAGS,
    http: { type: "string" },
    "token-file": { type: "string" },
    "max-line-bytes": { type: "string" },
    "wait-default": { type: "string" },
    "wait-max": { type: "string" },
    "output-bytes": { type: "string" },
  }, false);
  if (values.help) return help(MCP_HELP);
  // Every flag is checked before the storage is touched: a bad one changes nothing.
  const address = values.http === undefined ? null : parseHttpAddress(values.http);
  if (address === null && process.stdin.isTTY) {
    throw new UsageError("mcp speaks MCP on stdin/stdout: name it as your agent's MCP server (command outlive, args [\"mcp\"]), or pass --http 127.0.0.1:PORT");
  }
  if (address === null && values["token-file"] !== undefined) throw new UsageError("--token-file is the token of --http; stdio needs none (it belongs to the process that started the server)");
  const maxLineBytes = values["max-line-bytes"] === undefined ? DEFAULT_MAX_LINE_BYTES : wholeNumber("--max-line-bytes", values["max-line-bytes"], 1024);
  const waitMaxSeconds = values["wait-max"] === undefined ? DEFAULT_TOOL_LIMITS.waitMaxSeconds : seconds("--wait-max", values["wait-max"]);
  const limits: ToolLimits = {
    // A --wait-max below the default wait makes it the default too; only both given at odds is refused.
    waitDefaultSeconds: values["wait-default"] === undefined ? Math.min(DEFAULT_TOOL_LIMITS.waitDefaultSeconds, waitMaxSeconds) : seconds("--wait-default", values["wait-default"]),
    waitMaxSeconds,
    outputDefaultBytes: values["output-bytes"] === undefined ? DEFAULT_TOOL_LIMITS.outputDefaultBytes : wholeNumber("--output-bytes", values["output-bytes"], 1),
    cwd: process.cwd(),
  };
  if (limits.waitMaxSeconds <= 0) throw new UsageError(`--wait-max takes a duration above 0, got ${JSON.stringify(values["wait-max"])}`);
  if (limits.waitDefaultSeconds <= 0 || limits.waitDefaultSeconds > limits.waitMaxSeconds) {
    throw new UsageError(`--wait-default takes a duration above 0 and at most --wait-max (${limits.waitMaxSeconds}s), got ${limits.waitDefaultSeconds}s`);
  }
  if (limits.outputDefaultBytes > 1 << 20) throw new UsageError(`--output-bytes takes at most ${1 << 20} (the protocol's bound for one output call), got ${limits.outputDefaultBytes}`);

  const log = (line: string) => process.stderr.write(`outlive mcp: ${line}\n`);
  const supervisor = serverOptions(values, log);
  const tokenPath = values["token-file"] ?? join(supervisor.storage ?? defaultStorageRoot(), TOKEN_FILE);
  // The token is read (or made) before the storage is opened: a refused token file leaves the storage as it was.
  const token = address === null ? null : tokenFor(tokenPath, log);
  // The tools only ask; nothing subscribes, so no notification is ever sent to the agent.
  const session = await openSession({ supervisor, lockWaitMs: lockWaitMs(values), log, notify: async () => true });
  const version = outliveVersion();
  await session.call("initialize", { protocolVersion: "1", clientInfo: { name: "outlive mcp", version } });
  const call = (method: string, params?: unknown) => session.call(method, params);
  const newServer = () => mcpServer(call, { version, limits });

  let finish!: (why: string) => void;
  const finished = new Promise<string>((resolve) => (finish = resolve));
  process.once("SIGTERM", () => finish("SIGTERM"));
  process.once("SIGINT", () => finish("SIGINT"));
  const close = address === null ? await serveStdio(newServer, maxLineBytes, finish) : await serveHttp(address, token as string, tokenPath, newServer, maxLineBytes, log);
  log(`${await finished}; closing (tasks run on)`);
  await close();
  await session.close();
  process.stdin.destroy();
  return 0;
}

/** MCP on this process's stdio until the agent goes (stdin ends). */
async function serveStdio(newServer: () => ReturnType<typeof mcpServer>, maxLineBytes: number, finish: (why: string) => void): Promise<() => Promise<void>> {
  process.stdout.on("error", () => {});
  const server = newServer();
  // The SDK's transport does not watch for the end of stdin; the agent going away is that end.
  process.stdin.once("end", () => finish("stdin ended"));
  await server.connect(new StdioServerTransport(guardedLines(process.stdin, process.stdout, maxLineBytes), process.stdout));
  return () => server.close();
}

async function serveHttp(address: HttpAddress, token: string, tokenPath: string, newServer: () => ReturnType<typeof mcpServer>, maxRequestBytes: number, log: (line: string) => void): Promise<() => Promise<void>> {
  // Loaded only for --http: the SDK's HTTP transport and its server adapter are a stdio server's largest needless load.
  const { openHttpDoor } = await import("../../lib/mcp/http-door.ts");
  const door = await openHttpDoor({ address, token, newServer, maxRequestBytes, log });
  log(`listening on ${door.url} (bearer token in ${tokenPath})`);
  return () => door.close();
}

function tokenFor(path: string, log: (line: string) => void): string {
  const { token, made } = loadToken(path);
  if (made) log(`made a bearer token in ${path}`);
  return token;
}

function wholeNumber(flag: string, text: string, min: number): number {
  const n = number(flag, text);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`${flag} takes a whole number >= ${min}, got ${JSON.stringify(text)}`);
  return n;
}
