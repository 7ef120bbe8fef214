import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createInterface } from "node:readline";

/**
 * One release of outlive as a user has it installed: its CLI and its
 * library's bundle. Each is run in processes of its own, so two releases
 * never share one process (their modules, their caches, their spawner
 * clients).
 */
export interface Release {
  /** How tests name it: `443e5b2`, `this build`. */
  name: string;
  /** Its checkout (or installed package): `package.json`, `dist/`. */
  root: string;
  /** `dist/scripts/bin.js`, what the package's `bin` runs. */
  cli: string;
  /** `dist/pkg/outlive.js`, what `import "outlive"` loads. */
  lib: string;
}

export interface ReleaseCliResult {
  code: number;
  out: string;
  err: string;
}

/** `outlive ARGS…` of `release` in a process of its own, with `env` (this process's when left out). */
export function releaseCli(release: Release, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<ReleaseCliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [release.cli, ...args], { timeout: 60_000, env, maxBuffer: 16 * 1024 * 1024 }, (error, out, err) =>
      resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, out, err }));
  });
}

/** Like releaseCli, but a non-zero exit is an error naming the command and what it said. */
export async function releaseCliOk(release: Release, args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  const r = await releaseCli(release, args, env);
  if (r.code !== 0) throw new Error(`${release.name}: outlive ${args.join(" ")} exited ${r.code}: ${r.err || r.out}`);
  return r.out;
}

/*
 * A user's supervisor on a release's library: opens the storage with the
 * options it is given (argv[2], JSON), says `{"ready": …}` with its replay
 * report, then answers one JSON request a line on stdin (`run`, `wait`,
 * `kill`, `list`, `drain`) with one line on stdout. Every line it logs goes
 * to stderr. It exits after a drain, or when its stdin closes.
 */
const SUPERVISOR_PROGRAM = `
const [lib, optionsJson] = process.argv.slice(1);
const { Supervisor } = await import(lib);
const options = JSON.parse(optionsJson);
const sup = await Supervisor.open({ ...options, log: (line) => process.stderr.write("outlive: " + line + "\\n") });
const say = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
say({ ready: { placement: sup.placement.name, replay: sup.replayReport } });
const { createInterface } = await import("node:readline");
for await (const line of createInterface({ input: process.stdin })) {
  const { n, op, ...p } = JSON.parse(line);
  try {
    let result;
    if (op === "run") result = await sup.run(p.spec);
    else if (op === "wait") result = await sup.wait(p.id);
    else if (op === "kill") result = await sup.kill(p.id, p.options);
    else if (op === "list") result = sup.list();
    else if (op === "drain") result = await sup.drain(p.reason);
    else throw new Error("no such op " + op);
    say({ n, result: result ?? null });
    if (op === "drain") process.exit(0);
  } catch (error) {
    say({ n, error: { message: error.message, code: error.code } });
  }
}
await sup.close();
`;

type Answer = any;

/** A supervisor of one release, in a process of its own, driven line by line. */
export class ReleaseSupervisor {
  readonly stderr: string[] = [];
  ready!: { placement: string; replay: Answer };
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private n = 0;
  private readonly pending = new Map<number, { resolve: (v: Answer) => void; reject: (e: Error) => void }>();

  private constructor(readonly release: Release, readonly child: ChildProcess) {
    this.exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
    createInterface({ input: child.stderr! }).on("line", (l) => this.stderr.push(l));
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Starts one and waits (up to `readyMs`) until it has opened the storage and replayed it. */
  static async start(release: Release, options: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env, readyMs = 60_000): Promise<ReleaseSupervisor> {
    const child = spawn(process.execPath, ["--input-type=module", "-e", SUPERVISOR_PROGRAM, release.lib, JSON.stringify(options)], {
      env, stdio: ["pipe", "pipe", "pipe"],
    });
    const sup = new ReleaseSupervisor(release, child);
    const lines = createInterface({ input: child.stdout! });
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${release.name}'s supervisor did not open within ${readyMs} ms: ${sup.stderr.join("\n")}`)), readyMs);
      void sup.exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(new Error(`${release.name}'s supervisor exited (${code ?? signal}) before it was ready: ${sup.stderr.join("\n")}`));
      });
      lines.on("line", (line) => {
        const m = JSON.parse(line);
        if (m.ready) {
          sup.ready = m.ready;
          clearTimeout(timer);
          resolve();
        } else {
          const waiter = sup.pending.get(m.n);
          sup.pending.delete(m.n);
          if (m.error) waiter?.reject(Object.assign(new Error(m.error.message), { code: m.error.code }));
          else waiter?.resolve(m.result);
        }
      });
    });
    try {
      await ready;
    } catch (error) {
      child.kill("SIGKILL");
      throw error;
    }
    return sup;
  }

  /** One request; its answer, or its error thrown. */
  request(op: "run" | "wait" | "kill" | "list" | "drain", params: Record<string, unknown> = {}): Promise<Answer> {
    const n = ++this.n;
    return new Promise((resolve, reject) => {
      this.pending.set(n, { resolve, reject });
      this.child.stdin!.write(`${JSON.stringify({ n, op, ...params })}\n`);
    });
  }

  /** `drain(reason)`, then waits for the process to exit by itself. */
  async drain(reason: "restart" | "reload" | "disable" | "shutdown"): Promise<void> {
    await this.request("drain", { reason });
    await this.exited;
  }

  /** Closes its stdin: it closes the supervisor (tasks run on) and exits. */
  async close(): Promise<void> {
    this.child.stdin!.end();
    await this.exited;
  }

  /** SIGKILL, as a crash or an OOM kill ends it, and waits until it is gone. */
  async kill9(): Promise<void> {
    this.child.kill("SIGKILL");
    await this.exited;
  }
}
