import { OutliveError } from "../errors.ts";
import { newTaskId } from "../store/record/task-id.ts";
import { defaultStorageRoot } from "../store/storage/storage-root.ts";
import type { SupervisorOptions } from "../supervisor/options.ts";
import { type DrainReason, Supervisor } from "../supervisor/supervisor.ts";
import { outliveVersion } from "../version.ts";
import { LocalSession } from "../control/local-session.ts";
import { agreedVersion, RPC_ERRORS, RpcError } from "../rpc/protocol.ts";
import { connectHolder, type HolderConnection, NO_HOLDER } from "../control/socket-client.ts";

export interface SessionOptions {
  /** The storage and how tasks are placed; `control` is always on (a holder serves the others). */
  supervisor: SupervisorOptions;
  /** How long to wait for a storage held by a short command with no control channel (default 30 000 ms). */
  lockWaitMs?: number;
  /** Sends a notification to this session's peer; resolves once it was written (false: the peer is gone). */
  notify(method: string, params: unknown): Promise<boolean>;
  /** Told what the session does: taking the storage, becoming a client, taking over. Default: nothing. */
  log?(line: string): void;
  /** Called once a `drain` the peer asked for is done (serve exits then). */
  drained?(reason: DrainReason): void;
}

export interface Session {
  /** Carries out one method for the peer; throws an RpcError or OutliveError as the wire carries it. */
  call(method: string, params?: unknown): Promise<unknown>;
  /** "holder" while this process holds the storage; "client" while it goes through another's socket. */
  readonly role: "holder" | "client";
  /** Gives up the storage or the connection; tasks run on. */
  close(): Promise<void>;
}

type Backend =
  | { role: "holder"; sup: Supervisor; local: LocalSession }
  | { role: "client"; connection: HolderConnection };

interface Follow {
  inner: string | null;
  id: string;
  stream: string;
  next: Record<string, number>;
}

/**
 * A peer's session with a storage, whoever holds it: this process when it
 * can take the storage (`holder`), else the holder through the storage's
 * socket (`client`). When that holder goes, the session takes the storage
 * over (or becomes the client of whoever took it first), subscribes its
 * peer's completions again (at least once until acknowledged) and resumes
 * each follow from the last offset it passed on. What `outlive serve` puts
 * on its stdio and `outlive mcp` builds its tools on.
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { openSession } from "./session.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-session-"));
 * const seen: string[] = [];
 * const session = await openSession({
 *   supervisor: { storage, mode: "standalone" },
 *   notify: async (method) => (seen.push(method), true),
 * });
 * await session.call("initialize", { protocolVersion: "1" });
 * await session.call("completions/subscribe", {});
 * const task = await session.call("run", { shell: "exit 2" }) as { id: string };
 * console.log((await session.call("wait", { id: task.id }) as { exitCode: number }).exitCode, session.role); // 2 "holder"
 * await new Promise((r) => setTimeout(r, 100));
 * console.log(seen); // ["completion"]
 * await session.close();
 * rmSync(storage, { recursive: true });
 * ```
 */
export async function openSession(options: SessionOptions): Promise<Session> {
  const session = new ServeSession(options);
  await session.connect();
  return session;
}

class ServeSession implements Session {
  private backend!: Backend;
  private subscribed = false;
  private readonly follows = new Map<string, Follow>();
  private nextFollow = 1;
  /** Output notifications that came before their follow's answer, by the backend's followId. */
  private readonly early = new Map<string, unknown[]>();
  private closing = false;
  private takingOver: Promise<void> | null = null;
  private readonly log: (line: string) => void;
  private readonly version = outliveVersion();

  constructor(private readonly options: SessionOptions) {
    this.log = options.log ?? (() => {});
  }

  get role(): "holder" | "client" {
    return this.backend.role;
  }

  /** Holds the storage if it can, else joins its holder; waits out a short command holding it. */
  async connect(): Promise<void> {
    const o = this.options;
    const root = o.supervisor.storage ?? defaultStorageRoot();
    const deadline = Date.now() + (o.lockWaitMs ?? 30_000);
    for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
      try {
        const sup = await Supervisor.open({ ...o.supervisor, control: true });
        const local = new LocalSession(sup, {
          identity: { version: this.version, role: "holder" },
          notify: (method, params) => this.passOn(method, params),
          drain: (reason) => this.drain(reason),
        });
        this.backend = { role: "holder", sup, local };
        this.log(`holding ${sup.store.root} (placement ${sup.placementReason})`);
        return;
      } catch (error) {
        if ((error as OutliveError).code !== "E_STORAGE_LOCKED") throw error;
      }
      const connection = await connectHolder(root, { clientName: "outlive serve", onNotification: (method, params) => void this.passOn(method, params) });
      if (connection !== NO_HOLDER) {
        this.backend = { role: "client", connection };
        this.log(`${root} is held by another supervisor; serving through its control socket`);
        void connection.closed.then(() => this.holderWent());
        return;
      }
      if (Date.now() >= deadline) throw new OutliveError("E_STORAGE_LOCKED", `${root} is held by a process that serves no control channel (waited ${(o.lockWaitMs ?? 30_000) / 1000} s)`);
      await new Promise((r) => setTimeout(r, pause));
    }
  }

  async call(method: string, params?: unknown): Promise<unknown> {
    if (this.closing) throw new OutliveError("E_CLOSED", "this server is closing");
    if (this.takingOver) await this.takingOver;
    switch (method) {
      case "initialize": {
        const backend = this.backend;
        // A client's connection to the holder was initialized when it was made; its answer is the holder's.
        if (backend.role === "client") return { ...backend.connection.hello, protocolVersion: agreedVersion(params), role: "client" };
        return this.forward(method, params);
      }
      case "drain":
        if (this.backend.role === "holder") return this.forward(method, params);
        return this.drainClient(params);
      case "run": {
        // An id is chosen here when the peer gave none, so a run cut short by the holder's end is asked again, not doubled.
        const spec = typeof params === "object" && params !== null && !Array.isArray(params) && !("id" in params) ? { ...params, id: newTaskId() } : params;
        return this.retrying(method, spec);
      }
      case "completions/subscribe": {
        const answer = await this.forward(method, params);
        this.subscribed = true;
        return answer;
      }
      case "completions/unsubscribe":
        this.subscribed = false;
        return this.forward(method, params);
      case "output/follow":
        return this.follow(params);
      case "output/unfollow":
        return this.unfollow(params);
      default:
        return this.retrying(method, params);
    }
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    // A takeover under way ends in a supervisor of this process's own, which would hold it open after the close:
    // the close waits for it, then closes whatever it became.
    if (this.takingOver) await this.takingOver.catch(() => {});
    const backend = this.backend;
    if (backend.role === "holder") {
      await backend.local.close();
      await backend.sup.close();
    } else {
      backend.connection.close();
    }
  }

  private forward(method: string, params: unknown): Promise<unknown> {
    const backend = this.backend;
    return backend.role === "holder" ? backend.local.call(method, params) : backend.connection.request(method, params);
  }

  /** A call the holder's end cut short is asked again of the next holder (run carries its id, so it is found, not doubled). */
  private async retrying(method: string, params: unknown): Promise<unknown> {
    for (let attempt = 0; ; attempt++) {
      const backend = this.backend;
      try {
        return await this.forward(method, params);
      } catch (error) {
        const cut = (error as OutliveError).code === "E_CLOSED" && backend.role === "client" && !this.closing && attempt < 3;
        if (!cut) throw error;
        await this.holderWent();
        if (method === "run") {
          const id = (params as { id: string }).id;
          const found = await this.forward("get", { id }).catch(() => null);
          if (found) return found;
        }
      }
    }
  }

  /** Passes a notification from the backend to the peer, with this session's follow ids. */
  private async passOn(method: string, params: unknown): Promise<boolean> {
    if (method !== "output") return this.options.notify(method, params);
    const p = params as { followId: string; stream?: string; offset?: number; missed?: number; data?: string; end?: boolean };
    const entry = [...this.follows.entries()].find(([, f]) => f.inner === p.followId);
    if (!entry) {
      // A chunk that overtook its follow's answer waits for it, rather than being lost.
      const early = this.early.get(p.followId) ?? [];
      early.push(params);
      this.early.set(p.followId, early);
      return true;
    }
    const [outer, follow] = entry;
    if (p.end) {
      // A follow the holder's end cut short resumes in the next holder; the peer is not told it ended.
      if ((params as { reason?: string }).reason === "closed" && !this.closing && this.backend.role === "client") return true;
      this.follows.delete(outer);
      return this.options.notify("output", { ...p, followId: outer, next: follow.next });
    }
    if (p.stream && typeof p.offset === "number") {
      follow.next[p.stream] = p.offset + (p.missed ?? 0) + Buffer.from(p.data ?? "", "base64").byteLength;
    }
    return this.options.notify("output", { ...p, followId: outer });
  }

  private async follow(params: unknown): Promise<{ followId: string }> {
    const answer = await this.retrying("output/follow", params) as { followId: string };
    const p = params as { id: string; stream?: string; from?: number | Record<string, number> };
    const stream = p.stream ?? "stdout";
    const streams = stream === "both" ? ["stdout", "stderr"] : [stream];
    const next = Object.fromEntries(streams.map((s) => [s, typeof p.from === "number" ? p.from : (p.from?.[s] ?? 0)]));
    const outer = `s-${this.nextFollow++}`;
    this.follows.set(outer, { inner: answer.followId, id: p.id, stream, next });
    this.passEarly(answer.followId);
    return { followId: outer };
  }

  private passEarly(inner: string): void {
    const early = this.early.get(inner);
    this.early.delete(inner);
    // Passed on after this turn, so the peer has the follow's answer first.
    if (early) setTimeout(() => early.forEach((params) => void this.passOn("output", params)), 0);
  }

  private async unfollow(params: unknown): Promise<unknown> {
    const followId = (params as { followId?: unknown } | null)?.followId;
    const follow = typeof followId === "string" ? this.follows.get(followId) : undefined;
    if (!follow) return this.forward("output/unfollow", params);
    this.follows.delete(followId as string);
    return this.forward("output/unfollow", { followId: follow.inner });
  }

  /** The holder went: take the storage over (or join whoever did), then subscribe and follow again. */
  private holderWent(): Promise<void> {
    if (this.closing) return Promise.resolve();
    this.takingOver ??= (async () => {
      this.log("the holder went; taking the storage over");
      await this.connect();
      if (this.subscribed) await this.forward("completions/subscribe", {});
      for (const follow of this.follows.values()) {
        const answer = await this.forward("output/follow", { id: follow.id, stream: follow.stream, from: follow.stream === "both" ? follow.next : follow.next[follow.stream] }) as { followId: string };
        follow.inner = answer.followId;
        this.passEarly(answer.followId);
      }
      this.log(`now ${this.backend.role}`);
    })().finally(() => (this.takingOver = null));
    return this.takingOver;
  }

  private async drain(reason: DrainReason): Promise<void> {
    const backend = this.backend;
    if (backend.role !== "holder") return;
    this.closing = true;
    await backend.local.close();
    await backend.sup.drain(reason);
    this.options.drained?.(reason);
  }

  private async drainClient(params: unknown): Promise<unknown> {
    const reason = (params as { reason?: unknown } | null)?.reason;
    if (!["restart", "reload", "disable", "shutdown"].includes(reason as string)) {
      throw new RpcError(RPC_ERRORS.invalidParams, `drain: expected \`reason\` to be one of restart, reload, disable, shutdown, got ${JSON.stringify(reason)}`, { code: "E_BAD_OPTION", param: "reason" });
    }
    // The tasks are the holder's: a client's drain only ends this server; they run on.
    setTimeout(() => {
      void this.close().then(() => this.options.drained?.(reason as DrainReason));
    }, 0);
    return { draining: reason };
  }
}
