// A bare client of `outlive serve` for the benchmarks: the built CLI as a
// child process, one JSON object a line on its stdin and stdout, requests
// matched to responses by id, notifications handed to a callback as they
// arrive (with the moment each line arrived, for latencies).
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { performance } from "node:perf_hooks";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";

/** The installed CLI's entry, from dist/bench/. */
const BIN = fileURLToPath(new URL("../scripts/bin.js", import.meta.url));

export class ServeClient {
  private readonly child: ChildProcessByStdio<Writable, Readable, null>;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private nextId = 1;
  private partial = "";
  private readonly exited: Promise<void>;

  constructor(args: string[], private readonly onNotification: (method: string, params: unknown, atMs: number) => void = () => {}) {
    this.child = spawn(process.execPath, [BIN, "serve", "--stdio", ...args], { stdio: ["pipe", "pipe", "inherit"] });
    this.exited = new Promise((resolve) => this.child.on("exit", () => resolve()));
    this.child.stdout.setEncoding("utf8");
    this.child.stdout.on("data", (text: string) => {
      const atMs = performance.timeOrigin + performance.now();
      const lines = (this.partial + text).split("\n");
      this.partial = lines.pop() ?? "";
      for (const line of lines) if (line.trim() !== "") this.take(JSON.parse(line), atMs);
    });
  }

  private take(m: { id?: number; method?: string; params?: unknown; result?: unknown; error?: { message: string } }, atMs: number): void {
    if (m.method !== undefined && m.id === undefined) return this.onNotification(m.method, m.params, atMs);
    const p = this.pending.get(m.id as number);
    if (!p) return;
    this.pending.delete(m.id as number);
    if (m.error) p.reject(new Error(m.error.message));
    else p.resolve(m.result);
  }

  call<T = any>(method: string, params: unknown = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  }

  /** Ends the server as its parent going away does: its stdin closes. */
  async close(): Promise<void> {
    this.child.stdin.end();
    await this.exited;
  }
}
