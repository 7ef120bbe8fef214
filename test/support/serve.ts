import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { join } from "node:path";

/** The installed CLI as a user runs it (it runs the bundle in dist/cli/). */
export const BIN = join(__dirname, "..", "..", "dist", "scripts", "bin.js");

/** One JSON-RPC message as it came off the wire, and the raw line it came in. */
export interface WireMessage {
  jsonrpc?: unknown;
  id?: unknown;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: Record<string, unknown> };
  line: string;
}

/**
 * `outlive serve` in a process of its own, spoken to over its stdin and
 * stdout one line at a time, as a tool in any language does. Every line
 * either way is kept (`sent`, `received`) so a test can check all of them.
 */
export class ServeProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly sent: unknown[] = [];
  readonly received: WireMessage[] = [];
  stderr = "";
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private partial = "";
  private nextId = 1;
  private waiters: Array<() => void> = [];

  constructor(storage: string, extraArgs: string[] = [], env: NodeJS.ProcessEnv = process.env) {
    this.child = spawn(process.execPath, [BIN, "serve", "--stdio", "--storage", storage, "--mode", "standalone", ...extraArgs], {
      stdio: ["pipe", "pipe", "pipe"],
      env,
    });
    this.child.stdout.setEncoding("utf8");
    this.child.stdout.on("data", (text: string) => this.take(text));
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (text: string) => (this.stderr += text));
    this.exit = new Promise((resolve) => this.child.on("exit", (code, signal) => resolve({ code, signal })));
  }

  private take(text: string): void {
    const lines = (this.partial + text).split("\n");
    this.partial = lines.pop() ?? "";
    for (const line of lines) {
      if (line.trim() === "") continue;
      let message: WireMessage;
      try {
        message = { ...(JSON.parse(line) as object), line };
      } catch {
        // Kept as it came: a line the server sends that is not JSON fails the test that reads it.
        message = { line };
      }
      this.received.push(message);
    }
    for (const w of this.waiters.splice(0)) w();
  }

  /** Writes one raw line (a newline is added). */
  writeLine(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  /** Sends a request and returns the response with its id. */
  async request(method: string, params?: unknown, timeoutMs = 30_000): Promise<WireMessage> {
    const id = this.nextId++;
    const message = params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params };
    this.sent.push(message);
    this.writeLine(JSON.stringify(message));
    return this.until(`the response to ${method} (id ${id})`, (m) => m.id === id && m.method === undefined, timeoutMs);
  }

  /** Sends a request and returns its result, throwing the error object's message if it answered one. */
  async call(method: string, params?: unknown, timeoutMs?: number): Promise<any> {
    const response = await this.request(method, params, timeoutMs);
    if (response.error) throw Object.assign(new Error(`${method}: ${response.error.message}`), { rpc: response.error });
    return response.result;
  }

  /** The first message received (from the start) that `match` accepts; waits for it up to `timeoutMs`. */
  until(what: string, match: (m: WireMessage) => boolean, timeoutMs = 30_000, fromIndex = 0): Promise<WireMessage> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== look);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; stderr: ${this.stderr.slice(-2000)}`));
      }, timeoutMs);
      const look = () => {
        const found = this.received.slice(fromIndex).find(match);
        if (found) {
          clearTimeout(timer);
          resolve(found);
        } else {
          this.waiters.push(look);
        }
      };
      look();
    });
  }

  /** Notifications of `method` received so far. */
  notifications(method: string): WireMessage[] {
    return this.received.filter((m) => m.method === method && m.id === undefined);
  }

  /** Ends the server: stdin closed first (how a parent that goes away ends it), SIGKILL if it lingers. */
  async stop(graceMs = 10_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.exit;
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), graceMs);
    const result = await this.exit;
    clearTimeout(timer);
    return result;
  }
}
