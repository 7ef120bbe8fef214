import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { createInterface } from "node:readline";
import { projectRoot } from "../../shared/project-root.ts";

/** Which runtime runs the module: Node (the compiled JS) or Deno (the TypeScript source). */
export type ModuleRuntime = "node" | "deno";

export interface ModuleLaunch {
  storage: string;
  runtime?: ModuleRuntime;
  placement?: string;
  prefix?: string;
  graceMs?: number;
  livenessMs?: number;
  /** The supervisor's `backstopSlackSeconds` (a scope's RuntimeMaxSec = deadline + this). Default: the library's (60). */
  backstopSlackSeconds?: number;
  /** Prepended to the module's argv, e.g. a command that moves it into a cgroup first. */
  wrap?: string[];
  env?: Record<string, string>;
  /** Bound on the wait for "ready". Default DEFAULT_READY_TIMEOUT_MS (20000 ms). */
  readyTimeoutMs?: number;
}

/** The bound on a module's "ready" when the launch names none: a machine at a container's pace. */
export const DEFAULT_READY_TIMEOUT_MS = 20_000;

/** argv that starts the module under a runtime. */
export function moduleArgv(runtime: ModuleRuntime, root = projectRoot()): string[] {
  // Deno will not strip types under node_modules: an installed package runs its compiled module, a checkout its sources.
  const denoModule = root.includes(`${sep}node_modules${sep}`) ? "dist/harness/inside/module/module.js" : "harness/inside/module/module.ts";
  return runtime === "deno"
    ? [denoPath(root), "run", "-A", "--quiet", join(root, denoModule)]
    : [nodePath(), join(root, "dist/harness/inside/module/module.js")];
}

/**
 * deno from the nearest node_modules/.bin at or above the package: its own
 * in a checkout, the user's project's when outlive is installed there (npm
 * hoists dev tools); else `deno` on PATH.
 */
function denoPath(root: string): string {
  for (let dir = root; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", ".bin", "deno");
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) return "deno";
  }
}

function nodePath(): string {
  // Under Deno, process.execPath is deno itself; the module is then still started with node when asked.
  return /deno$/.test(process.execPath) ? "node" : process.execPath;
}

// deno-lint-ignore no-explicit-any
type Message = Record<string, any>;

/**
 * A running module process and its NDJSON conversation. Every wait is bounded.
 *
 * @example
 * ```ts
 * import { defineScenario, type ModuleProcess } from "outlive/harness";
 * export default defineScenario({
 *   name: "list-tasks",
 *   summary: "the module lists what it runs",
 *   async inside(ctx) {
 *     const mod: ModuleProcess = await ctx.daemon().start() as ModuleProcess;
 *     await mod.request("run", { spec: { id: "a", shell: "sleep 1" } });
 *     const { tasks } = await mod.request("list");
 *     ctx.check("one task", tasks.length === 1, tasks);
 *     await mod.drain("disable");
 *   },
 * });
 * ```
 */
export class ModuleProcess {
  readonly child: ChildProcess;
  readonly events: Message[] = [];
  ready!: Message;
  private nextReq = 1;
  private readonly pending = new Map<number, (m: Message) => void>();
  private readonly listeners: Array<(m: Message) => void> = [];
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  stderr = "";
  /** When the process was spawned, and when it exited (null while it runs); for timelines. */
  readonly spawnedAt = new Date().toISOString();
  exitedAt: string | null = null;

  private constructor(child: ChildProcess) {
    this.child = child;
    // A write to a module that was just killed fails with EPIPE; the exit already tells, and pending requests fail with it.
    child.stdin!.on("error", () => {});
    this.exited = new Promise((r) =>
      child.once("exit", (code, signal) => {
        this.exitedAt = new Date().toISOString();
        // A request the module can no longer answer fails now, not at its timeout.
        for (const [req, settle] of this.pending) settle({ reply: req, ok: false, code: "E_MODULE_EXITED", message: `the module exited (${signal ?? code}) before replying` });
        this.pending.clear();
        r({ code, signal });
      })
    );
    createInterface({ input: child.stdout! }).on("line", (line) => {
      let m: Message;
      try {
        m = JSON.parse(line);
      } catch {
        return;
      }
      if (typeof m.reply === "number") {
        this.pending.get(m.reply)?.(m);
        this.pending.delete(m.reply);
      } else {
        this.events.push(m);
        for (const l of this.listeners) l(m);
      }
    });
    child.stderr!.on("data", (d) => (this.stderr += d));
  }

  static async start(launch: ModuleLaunch): Promise<ModuleProcess> {
    const args = [...moduleArgv(launch.runtime ?? "node"), "--storage", resolve(launch.storage)];
    if (launch.placement) args.push("--placement", launch.placement);
    if (launch.prefix) args.push("--prefix", launch.prefix);
    if (launch.graceMs !== undefined) args.push("--grace-ms", String(launch.graceMs));
    if (launch.livenessMs !== undefined) args.push("--liveness-ms", String(launch.livenessMs));
    if (launch.backstopSlackSeconds !== undefined) args.push("--backstop-slack-seconds", String(launch.backstopSlackSeconds));
    const argv = [...(launch.wrap ?? []), ...args];
    const child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, ...launch.env } });
    const mod = new ModuleProcess(child);
    mod.ready = await mod.nextEvent((m) => m.event === "ready", launch.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS);
    return mod;
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Sends a request and resolves with its reply (bounded). */
  request(op: string, body: Message = {}, timeoutMs = 30_000): Promise<Message> {
    const req = this.nextReq++;
    return new Promise((resolvePromise, reject) => {
      const timer = setTimeout(() => reject(new Error(`module: no reply to ${op} within ${timeoutMs} ms; stderr: ${this.stderr.slice(-500)}`)), timeoutMs);
      this.pending.set(req, (m) => {
        clearTimeout(timer);
        if (m.ok) resolvePromise(m);
        else reject(Object.assign(new Error(m.message), { code: m.code }));
      });
      this.child.stdin!.write(`${JSON.stringify({ req, op, ...body })}\n`);
    });
  }

  /** The first event (already seen or still to come) that matches, within the bound. */
  nextEvent(match: (m: Message) => boolean, timeoutMs = 30_000): Promise<Message> {
    const seen = this.events.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolvePromise, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`module: no matching event within ${timeoutMs} ms; stderr: ${this.stderr.slice(-500)}`));
      }, timeoutMs);
      const onExit = () => {
        clearTimeout(timer);
        reject(new Error(`module exited before the event; stderr: ${this.stderr.slice(-800)}`));
      };
      this.child.once("exit", onExit);
      this.listeners.push((m) => {
        if (match(m)) {
          clearTimeout(timer);
          this.child.off("exit", onExit);
          resolvePromise(m);
        }
      });
    });
  }

  /** Calls `listener` with every event from now on (replies excluded). */
  onEvent(listener: (m: Message) => void): void {
    this.listeners.push(listener);
  }

  completions(): Message[] {
    return this.events.filter((m) => m.event === "completion").map((m) => m.task);
  }

  /** Tells the module why it drains and waits for it to exit. */
  async drain(reason: string, timeoutMs = 30_000): Promise<void> {
    this.child.stdin!.write(`${JSON.stringify({ op: "draining", reason })}\n`);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`module did not exit within ${timeoutMs} ms of the drain notice`)), timeoutMs);
    });
    try {
      await Promise.race([this.exited, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** SIGKILL, as a crash or a cgroup kill would. */
  async kill9(): Promise<void> {
    this.child.kill("SIGKILL");
    await this.exited;
  }
}
