import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { connect } from "node:net";
import { createInterface } from "node:readline";
import { waitUntil } from "../../../lib/kill/process-group.ts";
import type { ForeignModuleSpec } from "./foreign-spec.ts";

// deno-lint-ignore no-explicit-any
type Message = Record<string, any>;

function canConnect(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

/** Why `command` cannot be run (not found on PATH, not executable), or null. */
function commandProblem(command: string, path: string): string | null {
  const executable = (file: string) => {
    try {
      accessSync(file, constants.X_OK);
      return statSync(file).isFile();
    } catch {
      return false;
    }
  };
  if (command.includes("/")) return executable(command) ? null : existsSync(command) ? "not an executable file" : "no such file";
  return path.split(delimiter).some((dir) => dir && executable(join(dir, command))) ? null : `command not found on PATH (${path})`;
}

/**
 * A module that is not outlive's: any command, started by the daemon
 * simulator in the module cgroup. It has the same life as outlive's
 * module (spawned, ready, drained, its cgroup killed) but no NDJSON
 * conversation: a scenario drives it through its own interface (`send` a
 * line to its stdin, read `lines`, its files, its sockets, its CLI).
 *
 * @example
 * ```ts
 * import { defineScenario, type ForeignModule } from "outlive/harness";
 * export default defineScenario({
 *   name: "echo-tool",
 *   summary: "a tool that answers on stdout",
 *   async inside(ctx) {
 *     const d = ctx.daemon({ module: { argv: ["bash", "-c", "echo ready; while read -r l; do echo \"got $l\"; done"], ready: { stdout: "ready" } } });
 *     await d.start();
 *     const tool: ForeignModule = d.foreign;
 *     tool.send("ping");
 *     ctx.check("it answered", (await tool.waitForLine(/^got /)) === "got ping", tool.lines);
 *     await d.killModule();
 *   },
 * });
 * ```
 */
export class ForeignModule {
  readonly child: ChildProcess;
  /** Its stdout, line by line, as it came. */
  readonly lines: string[] = [];
  stderr = "";
  readonly spawnedAt: string;
  exitedAt: string | null = null;
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  /** What the timeline shows for it. */
  ready: Message = { placement: "foreign" };
  /** outlive's module has events; a foreign one has none. */
  readonly events: Message[] = [];
  private readonly lineListeners: Array<(line: string) => void> = [];
  private spawnError: Error | null = null;

  /** `spawnedMs`: the clock just before the spawn (see start). */
  private constructor(child: ChildProcess, readonly spec: ForeignModuleSpec, private readonly spawnedMs: number) {
    this.child = child;
    this.spawnedAt = new Date(spawnedMs).toISOString();
    child.stdin!.on("error", () => {});
    child.once("error", (e) => (this.spawnError = e));
    this.exited = new Promise((r) =>
      // "exit", not "close": tasks the module started may hold its stdout open long after it is gone.
      child.once("exit", (code, signal) => {
        this.exitedAt ??= new Date().toISOString();
        r({ code, signal });
      })
    );
    createInterface({ input: child.stdout! }).on("line", (line) => {
      this.lines.push(line);
      for (const l of this.lineListeners) l(line);
    });
    child.stderr!.on("data", (d) => (this.stderr += d));
  }

  /** Spawns `spec.argv` behind `wrap` (the move into the module cgroup) and waits, bounded, until it is ready. */
  static async start(spec: ForeignModuleSpec, wrap: string[] = []): Promise<ForeignModule> {
    const missing = commandProblem(spec.argv[0], { ...process.env, ...spec.env }.PATH ?? "");
    if (missing) throw new Error(`module ${JSON.stringify(spec.argv[0])} could not be started: ${missing}`);
    const argv = [...wrap, ...spec.argv];
    // Read before the spawn, not after: a module can make its ready file while this process waits for a CPU
    // after spawn() returns, and a file older than a clock read after that would be taken for a previous
    // incarnation's, so the module never counted as ready (seen once on a 2-core machine running the suite).
    const spawnedMs = Date.now();
    const child = spawn(argv[0], argv.slice(1), { cwd: spec.cwd, stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, ...spec.env } });
    const mod = new ForeignModule(child, spec, spawnedMs);
    await mod.waitReady();
    return mod;
  }

  get pid(): number {
    return this.child.pid!;
  }

  private async waitReady(): Promise<void> {
    const ready = this.spec.ready ?? { none: true };
    const timeoutMs = this.spec.readyTimeoutMs ?? 60_000;
    const name = JSON.stringify(this.spec.argv[0]);
    let gone = false;
    void this.exited.then(() => (gone = true));
    const isUp = async () => {
      if ("stdout" in ready) return this.lines.some((l) => (typeof ready.stdout === "string" ? l.includes(ready.stdout) : ready.stdout.test(l)));
      // Made or touched by THIS incarnation: a file the previous one left behind says nothing.
      if ("file" in ready) return existsSync(ready.file) && statSync(ready.file).mtimeMs >= this.spawnedMs - 5;
      if ("socket" in ready) return existsSync(ready.socket) && (await canConnect(ready.socket));
      return true;
    };
    const up = await waitUntil(async () => gone || this.spawnError !== null || (await isUp()), timeoutMs, 25);
    if (this.spawnError) throw new Error(`module ${name} could not be started: ${this.spawnError.message}`);
    if (gone && !(await isUp())) {
      const { code, signal } = await this.exited;
      const notFound = code === 127 ? " (command not found)" : code === 126 ? " (not executable)" : "";
      throw new Error(`module ${name} exited (${signal ?? `code ${code}`}${notFound}) before it was ready; stderr: ${this.stderr.trim().slice(-300)}`);
    }
    if (!up) {
      this.child.kill("SIGKILL");
      throw new Error(`module ${name} was not ready within ${timeoutMs} ms (waiting for ${JSON.stringify(ready, (_, v) => (v instanceof RegExp ? String(v) : v))})`);
    }
  }

  /** Writes one line to its stdin (the tool's own protocol, if it reads one). */
  send(line: string): void {
    this.child.stdin!.write(`${line}\n`);
  }

  /** The first stdout line (already seen or still to come) that matches, within the bound. */
  async waitForLine(match: string | RegExp, timeoutMs = 15_000): Promise<string> {
    const test = (l: string) => (typeof match === "string" ? l.includes(match) : match.test(l));
    let hit: string | undefined;
    const ok = await waitUntil(() => (hit = this.lines.find(test)) !== undefined, timeoutMs, 20);
    if (!ok || hit === undefined) throw new Error(`module ${JSON.stringify(this.spec.argv[0])}: no line matching ${String(match)} within ${timeoutMs} ms; last lines: ${JSON.stringify(this.lines.slice(-5))}`);
    return hit;
  }

  /** Tells it to drain (as its spec says) and waits, bounded, for it to exit; rejects if it does not. */
  async drain(reason: string, timeoutMs = 30_000): Promise<void> {
    const drain = this.spec.drain ?? { none: true };
    const waitMs = drain.waitMs ?? timeoutMs;
    if ("none" in drain) return;
    if ("stdin" in drain) this.send(drain.stdin.replaceAll("{reason}", reason));
    else this.child.kill(drain.signal);
    let done = false;
    void this.exited.then(() => (done = true));
    if (!(await waitUntil(() => done, waitMs, 20))) throw new Error(`module ${JSON.stringify(this.spec.argv[0])} did not exit within ${waitMs} ms of the drain`);
  }

  /** outlive's module speaks NDJSON; this one does not, so a request is a mistake in the scenario. */
  request(op: string, _body: Message = {}, _timeoutMs?: number): Promise<Message> {
    return Promise.reject(new Error(`module ${JSON.stringify(this.spec.argv[0])} is not outlive's module and has no ${JSON.stringify(op)} request: drive it through its own interface (mod.send, mod.lines, its files or CLI)`));
  }

  onEvent(_listener: (m: Message) => void): void {}

  completions(): Message[] {
    return [];
  }

  async kill9(): Promise<void> {
    this.child.kill("SIGKILL");
    await this.exited;
  }
}
