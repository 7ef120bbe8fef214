import { RpcEndpoint } from "../../lib/rpc/endpoint.ts";
import { DEFAULT_MAX_LINE_BYTES, METHODS } from "../../lib/rpc/protocol.ts";
import { openSession, type Session } from "../../lib/session/session.ts";
import type { SupervisorOptions } from "../../lib/supervisor/options.ts";
import { help, number, parseFlags } from "../cli/flags.ts";
import { lockWaitMs, SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "../cli/supervisor-flags.ts";
import { UsageError } from "../cli/usage-error.ts";

export const SERVE_HELP = `usage: outlive serve [--stdio] [--max-line-bytes N] [--storage DIR] [--mode MODE] [--placement NAME] [--lock-wait DURATION]

A long-lived supervisor for a tool in any language: start it as your tool's child and
speak JSON-RPC 2.0 on its stdin/stdout, one JSON object per line (see the README's
"The wire protocol"). Its tasks are placed outside your tool's cgroup, so they outlive
it; the next serve replays them. When another server already holds the storage, this
one serves its parent through that holder's control socket and takes the storage over
when the holder goes. It logs to stderr; stdout carries the protocol alone.
  --stdio            speak on stdin/stdout (the default when stdin is not a terminal)
  --max-line-bytes N the longest request line taken; longer ones are refused (-32600) and skipped (default ${DEFAULT_MAX_LINE_BYTES})
${SUPERVISOR_FLAGS_HELP.replace("(default $OUTLIVE_MODE, else standalone)", "(default $OUTLIVE_MODE, else daemon: a sidecar's tasks must outlive its parent's cgroup)")}`;

/** The options serve and mcp hold the storage with: daemon mode unless told, completions consumed by the peer. */
export function serverOptions(values: Record<string, unknown>, log: (line: string) => void): SupervisorOptions {
  const options = supervisorOptions(values);
  return { ...options, mode: (values.mode ?? process.env.OUTLIVE_MODE ?? "daemon") as SupervisorOptions["mode"], control: true, origin: undefined, log };
}

export async function serveCommand(args: string[]): Promise<number> {
  const { values } = parseFlags(args, { ...SUPERVISOR_FLAGS, stdio: { type: "boolean" }, "max-line-bytes": { type: "string" } }, false);
  if (values.help) return help(SERVE_HELP);
  if (!values.stdio && process.stdin.isTTY) {
    throw new UsageError("serve speaks JSON-RPC on stdin/stdout: start it as your tool's child (stdin a pipe), or pass --stdio to type requests at it");
  }
  const maxLineBytes = values["max-line-bytes"] === undefined ? DEFAULT_MAX_LINE_BYTES : number("--max-line-bytes", values["max-line-bytes"]);
  if (maxLineBytes < 1024) throw new UsageError(`--max-line-bytes takes a whole number of bytes >= 1024, got ${JSON.stringify(values["max-line-bytes"])}`);
  const log = (line: string) => process.stderr.write(`outlive serve: ${line}\n`);
  return await runServer({ supervisor: { ...serverOptions(values, log), maxLineBytes }, lockWaitMs: lockWaitMs(values), maxLineBytes, log });
}

/** Serves one session on this process's stdio until the parent goes (stdin ends), a drain, or SIGTERM/SIGINT. */
async function runServer(o: { supervisor: SupervisorOptions; lockWaitMs: number; maxLineBytes: number; log(line: string): void }): Promise<number> {
  process.stdout.on("error", () => {});
  let endpoint: RpcEndpoint | null = null;
  let finish!: (code: number) => void;
  const finished = new Promise<number>((resolve) => (finish = resolve));
  // Lines that come while the storage is being opened wait for it (stdin is read only once the session is there).
  const session: Session = await openSession({
    supervisor: o.supervisor,
    lockWaitMs: o.lockWaitMs,
    log: o.log,
    notify: (method, params) => endpoint?.notify(method, params) ?? Promise.resolve(false),
    drained: () => finish(0),
  });
  let ending = false;
  const end = async (why: string) => {
    if (ending) return;
    ending = true;
    o.log(`${why}; closing (tasks run on)`);
    await session.close();
    finish(0);
  };
  endpoint = new RpcEndpoint({ input: process.stdin, output: process.stdout }, {
    methods: METHODS,
    handle: (method, params) => session.call(method, params),
    maxLineBytes: o.maxLineBytes,
    requireInitialize: true,
    onClose: () => void end("stdin ended"),
  });
  process.once("SIGTERM", () => void end("SIGTERM"));
  process.once("SIGINT", () => void end("SIGINT"));
  const code = await finished;
  endpoint.close();
  // stdin may hold the event loop open once the parent is gone; nothing else is left to do.
  process.stdin.destroy();
  return code;
}
