import { statSync } from "node:fs";
import { OutliveError } from "../errors.ts";
import { streamFiles } from "../output/dropped.ts";
import { readChunks } from "../output/read-chunk.ts";
import type { OutputStream } from "../output/request.ts";
import { ALL_STATES, isTerminal, type TaskRecord, type TaskState } from "../store/record/record.ts";
import { DRAIN_REASONS, type DrainReason } from "../drain-reason.ts";
import type { ControlTarget } from "./target.ts";
import { badParam, optionalBoolean, optionalInteger, optionalString, paramsOf, taskId } from "./params.ts";
import { agreedVersion, RPC_ERRORS, RpcError } from "../rpc/protocol.ts";

/** What a session says of itself in `initialize`. */
export interface ServerIdentity {
  version: string;
  /** "holder" when this process holds the storage; a client of the holder says "client". */
  role: "holder" | "client";
}

export interface LocalSessionOptions {
  identity: ServerIdentity;
  /** Sends a notification to this session's peer; resolves once it was written. */
  notify(method: string, params: unknown): Promise<boolean>;
  /** The peer may end the server (serve's parent); absent on the socket, where drain is refused. */
  drain?(reason: DrainReason): Promise<void>;
  /** Largest chunk an `output` call returns, and a follower's chunk (default 64 KiB). */
  chunkBytes?: number;
}

const RUN_PARAMS = [
  "argv", "shell", "shellPath", "id", "cwd", "env", "key", "timeoutSeconds", "memoryMaxBytes", "maxOutputBytes", "pty",
  "envFile", "ensure", "cpuCores", "pidsMax", "readyLog", "readyPort", "readyHttp", "readyTimeoutSeconds", "waitReady",
  "restart", "restartMax", "restartDelaySeconds", "restartDelayMaxSeconds", "keepAfterEndMs", "mcpTask",
];
const STREAMS: readonly OutputStream[] = ["stdout", "stderr"];
/** The largest `maxBytes` an `output` call may ask for. */
export const MAX_OUTPUT_CALL_BYTES = 1 << 20;

/**
 * One peer's session with the supervisor that holds the storage: the
 * methods of the wire protocol carried out on it, this peer's completion
 * subscription and output follows. Params are checked here (names and
 * types, -32602); the supervisor checks values as it does in process.
 */
export class LocalSession {
  private subscription: ReturnType<ControlTarget["subscribeCompletions"]> | null = null;
  private unsubscribeReady: (() => void) | null = null;
  private readonly follows = new Map<string, AbortController>();
  private readonly waits = new Set<AbortController>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private nextFollow = 1;
  private closed = false;

  constructor(private readonly sup: ControlTarget, private readonly options: LocalSessionOptions) {}

  /** Carries out one method; throws what the wire's error object says. */
  call(method: string, params: unknown): Promise<unknown> {
    if (this.closed) return Promise.reject(new OutliveError("E_CLOSED", "the supervisor is closing; ask again"));
    const done = this.dispatch(method, params);
    if (method !== "wait") {
      this.inFlight.add(done);
      void done.catch(() => {}).finally(() => this.inFlight.delete(done));
    }
    return done;
  }

  /**
   * Ends the session: waits are told the supervisor closed (their client
   * asks again), follows and the subscription end; other requests under
   * way (a run, a kill's ladder) finish first.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waits) w.abort();
    for (const f of this.follows.values()) f.abort();
    this.subscription?.close();
    this.unsubscribeReady?.();
    await Promise.allSettled([...this.inFlight]);
  }

  private async dispatch(method: string, params: unknown): Promise<unknown> {
    const sup = this.sup;
    switch (method) {
      case "initialize":
        return this.initialize(paramsOf(method, params, ["protocolVersion", "clientInfo", "capabilities"]));
      case "run": {
        const p = paramsOf(method, params, RUN_PARAMS);
        // A task that waited for its readiness answers with the ports it listens on, as get does.
        return this.withPorts([await sup.run(p as never)])[0];
      }
      case "get":
        return this.withPorts([sup.get(taskId(method, paramsOf(method, params, ["id"])))])[0];
      case "list":
        return this.list(paramsOf(method, params, ["state", "key"]));
      case "kill": {
        const p = paramsOf(method, params, ["id", "graceMs", "cancel"]);
        return sup.kill(taskId(method, p), { graceMs: optionalInteger(method, p, "graceMs", 0), cancel: optionalBoolean(method, p, "cancel") });
      }
      case "wait": {
        const p = paramsOf(method, params, ["id", "timeoutMs", "until"]);
        const until = optionalString(method, p, "until", ["end", "ready"] as const) ?? "end";
        return this.wait(taskId(method, p), optionalInteger(method, p, "timeoutMs", 0), until);
      }
      case "ack":
        return sup.ack(taskId(method, paramsOf(method, params, ["id"])));
      case "remove": {
        const p = paramsOf(method, params, ["ids"]);
        if (!Array.isArray(p.ids) || p.ids.length === 0 || !p.ids.every((i) => typeof i === "string")) throw badParam(method, "ids", "a non-empty array of task id strings", p.ids);
        return sup.remove(p.ids as string[]);
      }
      case "prune": {
        const p = paramsOf(method, params, ["olderThanSeconds", "keep", "unacknowledged"]);
        const older = p.olderThanSeconds;
        if (older !== undefined && (typeof older !== "number" || !Number.isFinite(older) || older < 0)) throw badParam(method, "olderThanSeconds", "a number of seconds >= 0", older);
        return sup.prune({ olderThanSeconds: older as number | undefined, keep: optionalInteger(method, p, "keep", 0), unacknowledged: optionalBoolean(method, p, "unacknowledged") });
      }
      case "output":
        return this.output(paramsOf(method, params, ["id", "stream", "from", "maxBytes"]));
      case "write": {
        const p = paramsOf(method, params, ["id", "data", "encoding"]);
        const id = taskId(method, p);
        const encoding = optionalString(method, p, "encoding", ["utf8", "base64"] as const) ?? "utf8";
        if (typeof p.data !== "string") throw badParam(method, "data", `a string (${encoding})`, p.data);
        const bytes = encoding === "base64" ? decodeBase64(method, p.data) : new TextEncoder().encode(p.data);
        await sup.write(id, bytes);
        return { bytes: bytes.byteLength };
      }
      case "resize": {
        const p = paramsOf(method, params, ["id", "cols", "rows"]);
        const id = taskId(method, p);
        const cols = optionalInteger(method, p, "cols", 1, 65535);
        const rows = optionalInteger(method, p, "rows", 1, 65535);
        if (cols === undefined) throw badParam(method, "cols", "an integer from 1 to 65535", p.cols);
        if (rows === undefined) throw badParam(method, "rows", "an integer from 1 to 65535", p.rows);
        return sup.resize(id, cols, rows);
      }
      case "census":
        return this.census(paramsOf(method, params, ["pid", "cgroup"]));
      case "completions/subscribe":
        paramsOf(method, params, []);
        this.subscribe();
        return { subscribed: true };
      case "completions/unsubscribe":
        paramsOf(method, params, []);
        this.subscription?.close();
        this.subscription = null;
        this.unsubscribeReady?.();
        this.unsubscribeReady = null;
        return { subscribed: false };
      case "output/follow":
        return this.follow(paramsOf(method, params, ["id", "stream", "from"]));
      case "output/unfollow": {
        const p = paramsOf(method, params, ["followId"]);
        if (typeof p.followId !== "string") throw badParam(method, "followId", "the followId output/follow returned", p.followId);
        const follow = this.follows.get(p.followId);
        if (!follow) throw new OutliveError("E_NO_TASK", `No follow ${JSON.stringify(p.followId)} on this connection`);
        follow.abort();
        return { followed: false };
      }
      case "drain": {
        const p = paramsOf(method, params, ["reason"]);
        const reason = optionalString(method, p, "reason", DRAIN_REASONS);
        if (reason === undefined) throw badParam(method, "reason", `one of ${DRAIN_REASONS.join(", ")}`, p.reason);
        if (!this.options.drain) throw new RpcError(RPC_ERRORS.methodNotFound, "drain is only for the parent that started this server (on its stdio), not on the storage's socket");
        // Answered first: the drain ends this connection.
        setTimeout(() => void this.options.drain!(reason), 0);
        return { draining: reason };
      }
      default:
        throw new RpcError(RPC_ERRORS.methodNotFound, `Method not found: ${method}`);
    }
  }

  private initialize(p: Record<string, unknown>): unknown {
    const version = agreedVersion(p);
    const sup = this.sup;
    return {
      protocolVersion: version,
      serverInfo: { name: "outlive", version: this.options.identity.version },
      capabilities: { completions: true, outputFollow: true, pty: true, census: true },
      storage: sup.store.root,
      role: this.options.identity.role,
      placement: { name: sup.placement.name, reason: sup.placementReason },
      replay: sup.replayReport,
    };
  }

  /** Each live task with its listening sockets, read from /proc now (they are never stored). */
  private withPorts(records: TaskRecord[]): TaskRecord[] {
    const live = records.filter((r) => !isTerminal(r.state));
    if (live.length === 0) return records;
    const ports = this.sup.ports(live);
    return records.map((r) => (ports.has(r.id) ? { ...r, ports: ports.get(r.id) } : r));
  }

  private list(p: Record<string, unknown>): TaskRecord[] {
    const state = optionalString("list", p, "state", [...ALL_STATES, "live", "finished"] as const);
    const key = optionalString("list", p, "key");
    return this.withPorts(this.sup.list().filter((r) => {
      if (key !== undefined && r.key !== key) return false;
      if (state === "live") return !isTerminal(r.state);
      if (state === "finished") return isTerminal(r.state);
      return state === undefined || r.state === (state as TaskState);
    }));
  }

  /** `until: "end"` answers the terminal record; `"ready"` the record once ready (E_NOT_READY when it never is); either, with timeoutMs, the record as it is then. */
  private async wait(id: string, timeoutMs: number | undefined, until: "end" | "ready"): Promise<TaskRecord> {
    const ending = until === "ready" ? this.sup.waitReady(id) : this.sup.wait(id);
    const stop = new AbortController();
    this.waits.add(stop);
    try {
      return await new Promise<TaskRecord>((resolve, reject) => {
        ending.then((r) => resolve(until === "ready" ? this.withPorts([r])[0] : r), reject);
        stop.signal.addEventListener("abort", () => reject(new OutliveError("E_CLOSED", "the supervisor closed while waiting; ask again")), { once: true });
        if (timeoutMs !== undefined) {
          const timer = setTimeout(() => {
            try {
              resolve(this.withPorts([this.sup.get(id)])[0]);
            } catch (error) {
              reject(error);
            }
          }, timeoutMs);
          stop.signal.addEventListener("abort", () => clearTimeout(timer), { once: true });
          void ending.finally(() => clearTimeout(timer)).catch(() => {});
        }
      });
    } finally {
      this.waits.delete(stop);
      stop.abort();
    }
  }

  private output(p: Record<string, unknown>): unknown {
    const id = taskId("output", p);
    const stream = optionalString("output", p, "stream", STREAMS) ?? "stdout";
    const from = optionalInteger("output", p, "from", 0) ?? 0;
    const maxBytes = optionalInteger("output", p, "maxBytes", 1, MAX_OUTPUT_CALL_BYTES) ?? (this.options.chunkBytes ?? 64 * 1024);
    const record = this.sup.get(id);
    const files = streamFiles(this.sup.store.paths(id), stream);
    let missed = 0;
    const parts: Uint8Array[] = [];
    for (const chunk of readChunks(stream, files, from, maxBytes)) {
      missed += chunk.missed;
      if (chunk.data.byteLength > 0) parts.push(chunk.data);
    }
    const data = Buffer.concat(parts);
    const offset = from + missed;
    const next = offset + data.byteLength;
    const size = fileSize(files.data);
    return { id, stream, offset, missed, data: data.toString("base64"), next, size, done: isTerminal(record.state) && next >= size };
  }

  private async census(p: Record<string, unknown>): Promise<unknown> {
    const pid = optionalInteger("census", p, "pid", 1);
    if (pid === undefined) throw badParam("census", "pid", "a process id (an integer >= 1)", p.pid);
    const cgroup = optionalString("census", p, "cgroup");
    // Loaded on first use: the census (its process scan and config readers) is not paid by every holder.
    const [{ takeCensus }, { readProcStat }] = await Promise.all([import("../census/take-census.ts"), import("../proc/stat.ts")]);
    const stat = readProcStat(pid);
    // A pid no process runs under is the census's own answer (ok: false, leader-missing), as in process, not E_NO_TASK: it names no task.
    return takeCensus(stat ? { pid, startTime: stat.startTime } : { pid }, { cgroup: cgroup === undefined || cgroup === "auto" || cgroup === "none" ? (cgroup ?? "auto") : { path: cgroup } });
  }

  private subscribe(): void {
    if (this.subscription) return;
    // A task's readiness is news too: told to the subscriber as it happens (not kept for later, unlike a completion).
    this.unsubscribeReady = this.sup.subscribeReady((record) => void this.options.notify("ready", record));
    const subscription = this.sup.subscribeCompletions();
    this.subscription = subscription;
    void (async () => {
      for await (const record of subscription) {
        // The next completion waits until this one was written: a slow reader holds them, not the server's memory.
        if (!(await this.options.notify("completion", record))) break;
      }
    })();
  }

  private follow(p: Record<string, unknown>): { followId: string } {
    const id = taskId("output/follow", p);
    const stream = optionalString("output/follow", p, "stream", [...STREAMS, "both"] as const) ?? "stdout";
    const from = p.from;
    if (from !== undefined && !Number.isSafeInteger(from) && (typeof from !== "object" || from === null || Array.isArray(from))) {
      throw badParam("output/follow", "from", "a byte offset (integer >= 0) or { stdout, stderr }", from);
    }
    const chunks = this.sup.output(id, { stream, from: from as never });
    const followId = `f-${this.nextFollow++}`;
    const stop = new AbortController();
    this.follows.set(followId, stop);
    const start = (s: OutputStream) => (typeof from === "number" ? from : ((from as Partial<Record<OutputStream, number>> | undefined)?.[s] ?? 0));
    const next: Partial<Record<OutputStream, number>> = Object.fromEntries((stream === "both" ? STREAMS : [stream]).map((s) => [s, start(s)]));
    const stopped = new Promise<"stopped">((resolve) => stop.signal.addEventListener("abort", () => resolve("stopped"), { once: true }));
    // Started once the answer is out (after this turn's writes): the peer learns the followId before its first chunk.
    void new Promise((r) => setTimeout(r, 0)).then(async () => {
      const iterator = chunks[Symbol.asyncIterator]();
      let reason: string | undefined;
      try {
        for (;;) {
          const step = await Promise.race([iterator.next(), stopped]);
          if (step === "stopped") {
            reason = this.closed ? "closed" : "unfollowed";
            void iterator.return?.();
            break;
          }
          if (step.done) break;
          const c = step.value;
          next[c.stream] = c.offset + c.missed + c.data.byteLength;
          const sent = await this.options.notify("output", { followId, id, stream: c.stream, offset: c.offset, missed: c.missed, data: Buffer.from(c.data).toString("base64") });
          if (!sent) return;
        }
      } catch (error) {
        reason = (error as OutliveError).code === "E_CLOSED" ? "closed" : (error as Error).message;
      } finally {
        this.follows.delete(followId);
      }
      await this.options.notify("output", { followId, id, end: true, next, ...(reason ? { reason } : {}) });
    });
    return { followId };
  }
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function decodeBase64(method: string, text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) throw badParam(method, "data", "base64 text (encoding base64)", text);
  return Buffer.from(text, "base64");
}
