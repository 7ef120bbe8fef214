import { existsSync, readFileSync } from "node:fs";
import { chmod, lstat, mkdir, unlink } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { dirname, extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { OutliveError } from "../errors.ts";
import { waitUntil } from "../kill/process-group.ts";
import { inspectPid, type LiveProcess } from "../proc/identity.ts";
import { RpcEndpoint } from "../rpc/endpoint.ts";
import { MAX_SOCKET_PATH } from "../rpc/socket-path.ts";
import { runningAsExecutable } from "../single-executable.ts";
import { type HelloAnswer, type SettleAnswer, type SpawnAnswer, SPAWNER_PROTOCOL, type SpawnRequest } from "./protocol.ts";
import { isSpawnerCommandLine, SPAWNER_MODE, spawnerArgv } from "./spawner-command-line.ts";
import type { SpawnerHome } from "../placement/spawner-home.ts";
import type { SpawnerRecord } from "./spawner-server.ts";

export interface SpawnerClientOptions {
  home: SpawnerHome;
  /** The spawner's directory (0700): its socket, record and log. */
  dir: string;
  /** The spawner ends after this long with no supervisor connected and no spawn under way. */
  idleMs: number;
  /** How long a new spawner may take to say it is ready. */
  startWithinMs: number;
  log(line: string): void;
}

interface Connection {
  endpoint: RpcEndpoint;
  socket: Socket;
  pid: number;
  startTime: string;
  /** The channel's revision the spawner speaks (HelloAnswer.protocol; 1 before it was told). */
  protocol: number;
  /** Requests awaiting an answer: the socket keeps this process alive only while there are some. */
  waiting: number;
}

/** Asks one request, holding the process alive until the answer (an idle connection does not). */
async function ask(c: Connection, method: string, params?: unknown): Promise<unknown> {
  if (c.waiting++ === 0) c.socket.ref();
  try {
    return await c.endpoint.request(method, params);
  } finally {
    if (--c.waiting === 0) c.socket.unref();
  }
}

/**
 * The supervisor's side of its spawner: finds the one that runs (checked
 * against /proc: its pid, start time, program and home, and its own answer
 * to `hello`), starts one in the placement's home when none runs or the
 * record names another process, and hands it spawns. One connection, made on
 * first need and made again after the spawner went away.
 */
export class SpawnerClient {
  private connection: Promise<Connection> | null = null;
  readonly socketPath: string;
  readonly recordPath: string;
  readonly logPath: string;

  constructor(private readonly o: SpawnerClientOptions) {
    this.socketPath = join(o.dir, "spawner.sock");
    this.recordPath = join(o.dir, "spawner.json");
    this.logPath = join(o.dir, "spawner.log");
    if (Buffer.byteLength(this.socketPath) > MAX_SOCKET_PATH) {
      throw new OutliveError("E_STORAGE", `The spawner's socket path ${this.socketPath} is longer than ${MAX_SOCKET_PATH} bytes`);
    }
  }

  /**
   * Hands one spawn to the spawner; `sent` is called once the request is on
   * its way (from then on, a kill of this process does not stop the fork).
   * An error with code E_SPAWNER_GONE means the spawner ended before it
   * answered: the fork may or may not have happened.
   */
  async spawn(request: SpawnRequest, sent: () => void): Promise<SpawnAnswer> {
    let c = await this.connect();
    // A spawner that died since the last answer (its connection's close not yet heard) is replaced before the
    // request goes out, so a request is only ever lost with a spawner that died while it held it.
    if (c.endpoint.isClosed || inspectPid(c.pid)?.startTime !== c.startTime) {
      this.o.log(`spawner ${c.pid} is gone; starting another`);
      c.endpoint.close();
      if (this.connection) this.connection = null;
      c = await this.connect();
    }
    const answer = ask(c, "spawn", request);
    sent();
    try {
      return (await answer) as SpawnAnswer;
    } catch (error) {
      if (c.endpoint.isClosed) {
        throw new OutliveError("E_SPAWNER_GONE", `The spawner (pid ${c.pid}) ended before it answered the spawn of ${request.id}`, { cause: error });
      }
      throw new OutliveError("E_SPAWN", `The spawner could not start task ${request.id}: ${(error as Error).message}`, { cause: error });
    }
  }

  /**
   * What became of the request for task `id`, waiting up to `waitMs` while
   * it is under way; null when no trusted spawner runs (none is started for this).
   */
  async settle(id: string, waitMs: number): Promise<SettleAnswer | null> {
    if (!this.connection && !this.trusted()) return null;
    try {
      const c = await this.connect({ startIfNone: false });
      return (await ask(c, "settle", { id, waitMs })) as SettleAnswer;
    } catch {
      return null;
    }
  }

  /** Drops the connection; the spawner runs on for the next supervisor (and ends itself once idle). */
  detach(): void {
    const c = this.connection;
    this.connection = null;
    void c?.then((conn) => conn.endpoint.close(), () => {});
  }

  /** Ends the spawner (once no spawn is under way) and removes its home; nothing to do where none was ever started. */
  async end(): Promise<void> {
    const had = this.connection !== null || existsSync(this.recordPath);
    if (!had) return;
    let c = this.connection ? await this.connection.catch(() => null) : null;
    this.connection = null;
    const found = c ? { pid: c.pid, startTime: c.startTime } : this.trusted();
    if (!c && found) c = await this.dial(found).catch(() => null);
    if (c) {
      await ask(c, "exit").catch(() => {});
      c.endpoint.close();
    }
    if (found) await waitUntil(() => inspectPid(found.pid)?.startTime !== found.startTime, 5000, 10);
    await this.o.home.stop();
    await unlink(this.recordPath).catch(() => {});
  }

  /** The running spawner the record names, if /proc confirms it: same start time, the spawner's program, in its home. */
  trusted(): { pid: number; startTime: string } | null {
    const record = readRecord(this.recordPath);
    if (!record || record.socket !== this.socketPath) return null;
    const live = inspectPid(record.pid);
    return live && this.isSpawner(live, record.startTime) ? { pid: live.pid, startTime: live.startTime } : null;
  }

  private isSpawner(live: LiveProcess, startTime: string): boolean {
    if (live.startTime !== startTime || !this.o.home.holds(live)) return false;
    try {
      return isSpawnerCommandLine(readFileSync(`/proc/${live.pid}/cmdline`, "utf8").split("\0"), this.socketPath);
    } catch {
      return false;
    }
  }

  private connect(how: { startIfNone: boolean } = { startIfNone: true }): Promise<Connection> {
    if (this.connection) return this.connection;
    const made = this.open(how.startIfNone);
    this.connection = made;
    made.then(
      (c) => c.socket.once("close", () => {
        if (this.connection === made) this.connection = null;
      }),
      () => {
        if (this.connection === made) this.connection = null;
      },
    );
    return made;
  }

  private async open(startIfNone: boolean): Promise<Connection> {
    await this.makeDir();
    const found = this.trusted();
    if (found) {
      const c = await this.dial(found).catch((error: Error) => {
        this.o.log(`spawner ${found.pid} did not answer (${error.message}); starting another`);
        return null;
      });
      if (c && c.protocol === SPAWNER_PROTOCOL) return c;
      if (c) {
        // A previous release's spawner, still running after an upgrade: it would drop what a spawn carries now
        // (the shim's settings). It ends once what it has under way is done; then it is replaced.
        this.o.log(`spawner ${c.pid} speaks revision ${c.protocol} of its channel, not ${SPAWNER_PROTOCOL} (an older release's); ending it and starting another`);
        await ask(c, "exit").catch(() => {});
        c.endpoint.close();
        await waitUntil(() => inspectPid(found.pid)?.startTime !== found.startTime, 10_000, 10);
      }
    } else if (existsSync(this.recordPath)) {
      const record = readRecord(this.recordPath);
      this.o.log(`spawner record names pid ${record?.pid ?? "?"}, which is not a running spawner in ${this.o.home.where}; starting another (that pid is not signalled)`);
    }
    if (!startIfNone) throw new OutliveError("E_SPAWNER_GONE", "no spawner runs");
    // Whatever is left in the home (a spawner that stopped answering) ends first: one spawner a storage.
    await this.o.home.stop();
    await unlink(this.recordPath).catch(() => {});
    const started = Date.now();
    try {
      const flags = { socket: this.socketPath, record: this.recordPath, idleMs: this.o.idleMs, enter: this.o.home.enter };
      await this.o.home.start(spawnerArgv(spawnerProgram(), flags), spawnerEnv(), this.logPath);
      return await this.awaitReady(started);
    } catch (error) {
      // Nothing half-started is left: the home goes with whatever runs in it.
      await this.o.home.stop();
      throw error;
    }
  }

  private async awaitReady(started: number): Promise<Connection> {
    for (;;) {
      const ready = this.trusted();
      if (ready) {
        const c = await this.dial(ready).catch(() => null);
        if (c) {
          this.o.log(`spawner ${c.pid} started in ${this.o.home.where} (${Date.now() - started} ms)`);
          return c;
        }
      }
      if (Date.now() - started > this.o.startWithinMs) {
        throw new OutliveError("E_SPAWNER", `The spawner did not come up in ${this.o.home.where} within ${this.o.startWithinMs} ms (its log: ${this.logPath})`);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  private async dial(who: { pid: number; startTime: string }): Promise<Connection> {
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect(this.socketPath);
      s.once("connect", () => resolve(s));
      s.once("error", reject);
    });
    socket.on("error", () => {});
    const endpoint = new RpcEndpoint({ input: socket, output: socket }, {
      methods: [],
      handle: async () => null,
      maxLineBytes: 1024 * 1024,
      requireInitialize: false,
      onClose: () => socket.destroy(),
    });
    const hello = (await endpoint.request("hello")) as HelloAnswer;
    if (hello.pid !== who.pid || hello.startTime !== who.startTime) {
      endpoint.close();
      throw new Error(`the socket answered as pid ${hello.pid}, not the spawner ${who.pid} its record names`);
    }
    // The connection does not keep this process alive: a supervisor may exit with it open.
    socket.unref();
    return { endpoint, socket, pid: who.pid, startTime: who.startTime, protocol: hello.protocol ?? 1, waiting: 0 };
  }

  private async makeDir(): Promise<void> {
    await mkdir(this.o.dir, { recursive: true, mode: 0o700 });
    const st = await lstat(this.o.dir);
    const uid = process.getuid?.();
    if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) {
      throw new OutliveError("E_STORAGE", `The spawner's directory ${this.o.dir} is not a directory of this user's; refusing to use it`);
    }
    if ((st.mode & 0o077) !== 0) await chmod(this.o.dir, 0o700);
  }
}

function readRecord(path: string): SpawnerRecord | null {
  try {
    const value = JSON.parse(readFileSync(path, "utf8")) as SpawnerRecord;
    return Number.isInteger(value.pid) && value.pid > 0 && typeof value.startTime === "string" ? value : null;
  } catch {
    return null;
  }
}

declare const Deno: unknown;

/**
 * The spawner's program file: beside this module when the runtime can run
 * it (built `.js`, or Deno with `.ts`), else the package's build (a bundled
 * CLI, or Node running these sources through a loader, as the tests do).
 */
export function spawnerMainPath(): string {
  const here = fileURLToPath(import.meta.url);
  const beside = join(dirname(here), `spawner-main${extname(here)}`);
  if ((extname(here) === ".js" || typeof Deno !== "undefined") && existsSync(beside)) return beside;
  for (let dir = dirname(here); ; dir = dirname(dir)) {
    const built = join(dir, "dist", "lib", "spawner", "spawner-main.js");
    if (existsSync(built)) return built;
    if (dirname(dir) === dir) throw new OutliveError("E_SPAWNER", `Cannot find the spawner's program near ${here} (build it: npm run build)`);
  }
}

/**
 * How the spawner is started (spawner-command-line.ts): the single executable
 * in its spawner mode, or the runtime on the spawner's file (Deno runs the
 * `.ts` file as it is).
 */
function spawnerProgram(): string[] {
  if (runningAsExecutable()) return [process.execPath, SPAWNER_MODE];
  const main = spawnerMainPath();
  const runtime = typeof Deno !== "undefined" && main.endsWith(".ts") ? [process.execPath, "run", "--allow-all", "--quiet"] : [process.execPath];
  return [...runtime, main];
}

/**
 * The spawner's own environment: what its runtime needs to start, nothing of
 * the supervisor's secrets (each spawn brings its own). No `NODE_OPTIONS` nor
 * any other `NODE_*`: they are the user's settings for the Node programs
 * they run, and one such as `--require FILE` would stop the spawner from
 * starting, so every task of the storage.
 */
function spawnerEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"]) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  return env;
}
