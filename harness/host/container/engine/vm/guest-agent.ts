import type { CommandResult } from "../../command.ts";
import { JsonLineSocket, type Message } from "./json-socket.ts";

/** How often a running guest-exec is asked about, at first and at most. */
const POLL_FIRST_MS = 20;
const POLL_MAX_MS = 250;
/** Bound on one request to the agent (not on the command a guest-exec runs). */
const REQUEST_MS = 10_000;

/**
 * A client of the guest agent Debian ships (qemu-guest-agent) on its
 * virtio-serial port: commands reach the guest as `guest-exec` (argv, no
 * shell; stdin given as input-data; output captured) and are awaited with
 * `guest-exec-status`, never by reading the serial console. One connection,
 * requests one at a time, so several callers can wait on guest commands at
 * once: each poll is a short request of its own.
 *
 * The agent keeps no session: an answer to a request abandoned at its bound
 * may arrive later, so after any bound the next request re-synchronises
 * (`guest-sync-delimited` with a fresh id: every answer before the id's is
 * stale).
 */
export class GuestAgent {
  private socket: JsonLineSocket | null = null;
  private synced = false;
  private syncId = Math.floor(Math.random() * 1e9);
  private ended = false;

  constructor(readonly path: string) {}

  private async connection(timeoutMs: number): Promise<JsonLineSocket> {
    // Closed for good: qemu's socket takes one client, and a caller still polling an old boot's command must not take it.
    if (this.ended) throw new Error("the guest agent client was closed");
    if (this.socket && !this.socket.closed) return this.socket;
    this.socket = await JsonLineSocket.open(this.path, timeoutMs);
    this.synced = false;
    return this.socket;
  }

  /** Resolves once the agent answers a sync within `timeoutMs`; throws otherwise (the guest may still be booting). */
  async sync(timeoutMs = 2_000): Promise<void> {
    const socket = await this.connection(timeoutMs);
    const id = ++this.syncId;
    // A leading 0xFF resets the agent's parser, in case a previous client left half a request in it.
    const raw = Buffer.concat([Buffer.from([0xff]), Buffer.from(`${JSON.stringify({ execute: "guest-sync-delimited", arguments: { id } })}\n`)]);
    await socket.exchange(raw, (m) => m.return === id, timeoutMs);
    this.synced = true;
  }

  /** One request; the answer's `return`, or an Error with the agent's `desc`. */
  async request(execute: string, args: Message | undefined, timeoutMs = REQUEST_MS): Promise<unknown> {
    if (!this.synced) await this.sync(timeoutMs);
    const socket = await this.connection(timeoutMs);
    try {
      const m = await socket.exchange(`${JSON.stringify(args ? { execute, arguments: args } : { execute })}\n`, (m) => "return" in m || "error" in m, timeoutMs);
      if (m.error) throw new Error(`guest agent: ${execute}: ${(m.error as { desc?: string }).desc ?? JSON.stringify(m.error)}`);
      return m.return;
    } catch (error) {
      this.synced = false;
      throw error;
    }
  }

  /**
   * Runs argv in the guest and waits (bounded) for it. `timedOut` means the
   * bound passed; the command itself is ended by the guest (callers wrap it
   * in `timeout`), since the agent has no way to signal it.
   */
  async exec(argv: string[], options: { timeoutMs: number; input?: string; env?: string[] }): Promise<CommandResult> {
    const [path, ...arg] = argv;
    const started = Date.now();
    const spawned = (await this.request("guest-exec", {
      path,
      arg,
      ...(options.env ? { env: options.env } : {}),
      ...(options.input !== undefined ? { "input-data": Buffer.from(options.input).toString("base64") } : {}),
      "capture-output": true,
    })) as { pid: number };
    let wait = POLL_FIRST_MS;
    for (;;) {
      const s = (await this.request("guest-exec-status", { pid: spawned.pid })) as ExecStatus;
      if (s.exited) {
        return {
          exitCode: s.exitcode ?? null,
          signal: s.signal === undefined ? null : `signal ${s.signal}`,
          stdout: decode(s["out-data"]),
          stderr: decode(s["err-data"]),
          timedOut: false,
        };
      }
      if (Date.now() - started >= options.timeoutMs) return { exitCode: null, signal: null, stdout: "", stderr: "", timedOut: true };
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, POLL_MAX_MS);
    }
  }

  /** How long the connection has heard nothing (0 with none open): a guest agent that runs answers within moments. */
  silentMs(now = Date.now()): number {
    return this.socket && !this.socket.closed ? now - this.socket.lastHeardAt : 0;
  }

  /** Ends this client for good; a new one is made for the next connection. */
  close(): void {
    this.ended = true;
    this.socket?.close();
    this.socket = null;
  }
}

interface ExecStatus {
  exited: boolean;
  exitcode?: number;
  signal?: number;
  "out-data"?: string;
  "err-data"?: string;
}

function decode(data: string | undefined): string {
  return data ? Buffer.from(data, "base64").toString("utf8") : "";
}
