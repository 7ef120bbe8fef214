import { writeFileSync } from "node:fs";
import { chmod, unlink } from "node:fs/promises";
import { createServer, type Socket } from "node:net";
import { RpcEndpoint } from "../rpc/endpoint.ts";
import { inspectPid } from "../proc/identity.ts";
import { spawnTask } from "../spawn/spawn-task.ts";
import { writeFileAtomic } from "../store/write/atomic-write.ts";
import { outliveVersion } from "../version.ts";
import {
  checkSettleRequest,
  checkSpawnRequest,
  SPAWNER_PROTOCOL,
  type HelloAnswer,
  type SettleAnswer,
  type SpawnAnswer,
  SPAWNER_MAX_LINE_BYTES,
  SPAWNER_METHODS,
} from "./protocol.ts";

/** How many finished requests the spawner remembers for `settle` (oldest forgotten first). */
const REMEMBERED = 10_000;

export interface SpawnerServerOptions {
  /** The socket to listen on; its directory was made 0700 by whoever started the spawner. */
  socket: string;
  /** Where the spawner says who it is once it listens (`SpawnerRecord`), written atomically. */
  record: string;
  /** A `cgroup.procs` to move into before anything else (the spawner's own cgroup), or null. */
  enter: string | null;
  /** Ends after this long with no client connected and no spawn under way. */
  idleMs: number;
  log(line: string): void;
}

/** What a running spawner writes to its record file: the next supervisor checks it against /proc before trusting it. */
export interface SpawnerRecord {
  pid: number;
  startTime: string;
  socket: string;
  version: string;
  startedAt: string;
}

/**
 * The spawner: forks tasks for the supervisors of one storage from a
 * process that lives outside their cgroup, so a kill of a supervisor's
 * cgroup at any moment finds either no request sent or a fork the spawner
 * carries through. It serves one request at a time per line, in order of
 * arrival, keeps what became of each task id for `settle`, and ends on
 * `exit` (once no spawn is under way) or after `idleMs` with no client.
 */
export async function serveSpawner(o: SpawnerServerOptions): Promise<{ done: Promise<void> }> {
  // Before anything else: once it is in its own cgroup, a kill of the cgroup that started it no longer reaches it.
  if (o.enter) writeFileSync(o.enter, String(process.pid));
  const self = inspectPid(process.pid);
  if (!self) throw new Error("cannot read this process's own /proc entry");
  const version = outliveVersion();
  const pending = new Map<string, Promise<unknown>>();
  const outcomes = new Map<string, SettleAnswer>();
  const clients = new Set<Socket>();
  let ending = false;
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  let idleTimer: ReturnType<typeof setTimeout> | undefined;

  const remember = (id: string, answer: SettleAnswer) => {
    outcomes.delete(id);
    outcomes.set(id, answer);
    if (outcomes.size > REMEMBERED) outcomes.delete(outcomes.keys().next().value!);
  };
  const end = async () => {
    if (ending) return;
    ending = true;
    clearTimeout(idleTimer);
    await Promise.allSettled([...pending.values()]);
    server.close();
    for (const c of clients) c.end();
    await unlink(o.socket).catch(() => {});
    finish();
  };
  const idleCheck = () => {
    clearTimeout(idleTimer);
    if (ending || clients.size > 0 || pending.size > 0) return;
    idleTimer = setTimeout(() => {
      if (clients.size === 0 && pending.size === 0) {
        o.log(`spawner ${process.pid}: idle for ${o.idleMs} ms with no supervisor connected; ending`);
        void end();
      }
    }, o.idleMs);
  };

  const spawn = async (params: unknown): Promise<SpawnAnswer> => {
    const request = checkSpawnRequest(params);
    if (ending) throw new Error("the spawner is ending; ask the next one");
    if (pending.has(request.id)) throw new Error(`a spawn of ${request.id} is already under way`);
    const work = spawnTask(request.argv, {
      cwd: request.cwd,
      env: request.env,
      files: request.files,
      stdin: request.stdin !== undefined ? Buffer.from(request.stdin, "base64") : null,
      argv0: request.argv0 ?? null,
    });
    pending.set(request.id, work.catch(() => {}));
    try {
      const spawned = await work;
      remember(request.id, { state: "spawned", pid: spawned.pid, startTime: inspectPid(spawned.pid)?.startTime ?? null });
      return { pid: spawned.pid, startedWithin: spawned.startedWithin };
    } catch (error) {
      remember(request.id, { state: "failed", error: (error as Error).message });
      throw error;
    } finally {
      pending.delete(request.id);
      idleCheck();
    }
  };

  const settle = async (params: unknown): Promise<SettleAnswer> => {
    const { id, waitMs } = checkSettleRequest(params);
    const under = pending.get(id);
    if (under) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([under, new Promise((r) => (timer = setTimeout(r, waitMs)))]);
      clearTimeout(timer);
      if (pending.has(id)) return { state: "pending" };
    }
    return outcomes.get(id) ?? { state: "unknown" };
  };

  const handle = (method: string, params: unknown): Promise<unknown> => {
    if (method === "hello") return Promise.resolve({ pid: process.pid, startTime: self.startTime, version, protocol: SPAWNER_PROTOCOL } satisfies HelloAnswer);
    if (method === "spawn") return spawn(params);
    if (method === "settle") return settle(params);
    // exit: answered first, then the spawner ends once what is under way is done.
    setImmediate(() => void end());
    return Promise.resolve({});
  };

  const server = createServer((socket) => {
    socket.on("error", () => {});
    clients.add(socket);
    clearTimeout(idleTimer);
    const endpoint = new RpcEndpoint({ input: socket, output: socket }, {
      methods: SPAWNER_METHODS,
      handle,
      maxLineBytes: SPAWNER_MAX_LINE_BYTES,
      requireInitialize: false,
      onClose: () => {
        clients.delete(socket);
        socket.destroy();
        idleCheck();
      },
    });
    void endpoint;
  });
  await unlink(o.socket).catch(() => {});
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.socket, () => resolve());
  });
  await chmod(o.socket, 0o600);
  const record: SpawnerRecord = { pid: process.pid, startTime: self.startTime, socket: o.socket, version, startedAt: new Date().toISOString() };
  await writeFileAtomic(o.record, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  o.log(`spawner ${process.pid}: listening on ${o.socket}`);
  idleCheck();
  return { done };
}
