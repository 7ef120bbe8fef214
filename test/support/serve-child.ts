import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";

/** The installed entry (`outlive` as npm links it: the bundled CLI). */
export const BIN = join(__dirname, "..", "..", "dist", "scripts", "bin.js");

export interface WireError {
  code: number;
  message: string;
  data?: { code?: string; param?: string; [k: string]: unknown };
}

/**
 * `outlive serve` (or `mcp`'s sibling commands) as a tool in another
 * language runs it: a child process spoken to in JSON-RPC lines on its
 * stdio. Every line either way is kept, for the tests' checks.
 */
export class ServeChild {
  readonly child: ChildProcess;
  readonly sent: unknown[] = [];
  readonly received: Array<Record<string, unknown>> = [];
  stderr = "";
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Settles once its pipes have closed as well, so all it wrote has been read ("exit" may come first). */
  readonly closed: Promise<void>;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: WireError) => void }>();
  private readonly listeners = new Set<() => void>();

  /** `command`: what runs `serve` (default the installed entry under this Node; the single executable's tests give theirs). */
  constructor(args: string[], env: NodeJS.ProcessEnv = process.env, command: string[] = [process.execPath, BIN]) {
    this.child = spawn(command[0], [...command.slice(1), "serve", ...args], { stdio: ["pipe", "pipe", "pipe"], env });
    this.exited = new Promise((resolve) => this.child.once("exit", (code, signal) => resolve({ code, signal })));
    this.closed = new Promise((resolve) => this.child.once("close", () => resolve()));
    let buffered = "";
    this.child.stdout!.setEncoding("utf8");
    this.child.stdout!.on("data", (chunk: string) => {
      buffered += chunk;
      for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        const message = JSON.parse(line) as Record<string, unknown>;
        this.received.push(message);
        const waiter = typeof message.id === "number" ? this.pending.get(message.id) : undefined;
        if (waiter && !("method" in message)) {
          this.pending.delete(message.id as number);
          if (message.error) waiter.reject(message.error as WireError);
          else waiter.resolve(message.result);
        }
        for (const l of this.listeners) l();
      }
    });
    this.child.stderr!.setEncoding("utf8");
    this.child.stderr!.on("data", (chunk: string) => (this.stderr += chunk));
    this.child.stdin!.on("error", () => {});
  }

  /** Sends a raw line (for bad input) and nothing else. */
  sendLine(line: string): void {
    this.child.stdin!.write(`${line}\n`);
  }

  request<T = unknown>(method: string, params?: unknown): Promise<T> {
    const id = this.nextId++;
    const message = { jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) };
    this.sent.push(message);
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.sendLine(JSON.stringify(message));
    });
  }

  initialize(): Promise<Record<string, unknown>> {
    return this.request("initialize", { protocolVersion: "1", clientInfo: { name: "test" } });
  }

  /** The notifications of one method received so far. */
  notifications(method: string): Array<Record<string, unknown>> {
    return this.received.filter((m) => m.method === method).map((m) => m.params as Record<string, unknown>);
  }

  /** Resolves once `check` holds for what was received (it is asked on each line), or rejects after `timeoutMs`. */
  until<T>(check: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const look = () => {
        const value = check();
        if (value) {
          this.listeners.delete(look);
          clearTimeout(timer);
          resolve(value);
        }
      };
      const timer = setTimeout(() => {
        this.listeners.delete(look);
        reject(new Error(`not seen within ${timeoutMs} ms; received ${JSON.stringify(this.received.slice(-5))}; stderr ${this.stderr}`));
      }, timeoutMs);
      this.listeners.add(look);
      look();
    });
  }

  /** Ends the server as its parent going away does: stdin closes. */
  async close(): Promise<void> {
    this.child.stdin!.end();
    await this.exited;
  }

  kill(signal: NodeJS.Signals = "SIGKILL"): Promise<unknown> {
    this.child.kill(signal);
    return this.exited;
  }
}
