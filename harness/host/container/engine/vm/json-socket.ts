import { connect, type Socket } from "node:net";

/** A JSON message of qemu's two protocols (QMP, the guest agent): one object a line. */
export type Message = Record<string, unknown>;

/**
 * One connection to a unix socket that speaks a JSON object a line (QMP and
 * the guest agent both do), with requests one at a time: each waits for the
 * next message its `accept` takes, within a bound. The socket is unref'd
 * while idle, so a held connection never keeps the harness's process alive.
 */
export class JsonLineSocket {
  private buffer = "";
  private waiter: ((m: Message) => void) | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private closedWhy: string | null = null;
  /** When this connection last heard anything (epoch ms), or when it was made. */
  lastHeardAt = Date.now();

  private constructor(private readonly socket: Socket, readonly path: string) {
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => this.onData(chunk));
    socket.on("close", () => (this.closedWhy ??= `${path} closed`));
    socket.on("error", (e) => (this.closedWhy = `${path}: ${e.message}`));
    socket.unref();
  }

  /** Connects within the bound, or throws with the socket's path and why. */
  static open(path: string, timeoutMs: number): Promise<JsonLineSocket> {
    return new Promise((resolve, reject) => {
      const socket = connect(path);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`no answer from ${path} within ${timeoutMs} ms`));
      }, timeoutMs);
      socket.once("connect", () => {
        clearTimeout(timer);
        resolve(new JsonLineSocket(socket, path));
      });
      socket.once("error", (e) => {
        clearTimeout(timer);
        reject(new Error(`cannot connect to ${path}: ${e.message}`));
      });
    });
  }

  get closed(): boolean {
    return this.closedWhy !== null;
  }

  private onData(chunk: string): void {
    this.lastHeardAt = Date.now();
    // The guest agent marks a guest-sync-delimited answer with a 0xFF byte; it is no part of the JSON.
    this.buffer += chunk.replaceAll("\xff", "");
    for (;;) {
      const end = this.buffer.indexOf("\n");
      if (end < 0) return;
      const line = this.buffer.slice(0, end).trim();
      this.buffer = this.buffer.slice(end + 1);
      if (!line) continue;
      let message: Message;
      try {
        message = JSON.parse(Buffer.from(line, "latin1").toString("utf8")) as Message;
      } catch {
        continue; // a line broken by a guest agent that restarted mid-answer: the caller's bound handles it
      }
      this.waiter?.(message);
    }
  }

  /**
   * Writes `raw` (already framed) and resolves with the first message
   * `accept` takes; messages it does not take (QMP events, a late answer to
   * an abandoned request) are dropped. Rejects at the bound.
   */
  exchange(raw: string | Buffer, accept: (m: Message) => boolean, timeoutMs: number): Promise<Message> {
    const run = () =>
      new Promise<Message>((resolve, reject) => {
        if (this.closedWhy) return reject(new Error(this.closedWhy));
        this.socket.ref();
        const done = (error: Error | null, m?: Message) => {
          clearTimeout(timer);
          this.waiter = null;
          this.socket.off("close", onClose);
          this.socket.unref();
          if (error) reject(error);
          else resolve(m!);
        };
        const timer = setTimeout(() => done(new Error(`no answer from ${this.path} within ${timeoutMs} ms`)), timeoutMs);
        const onClose = () => done(new Error(this.closedWhy ?? `${this.path} closed`));
        this.socket.once("close", onClose);
        this.waiter = (m) => {
          if (accept(m)) done(null, m);
        };
        this.socket.write(typeof raw === "string" ? Buffer.from(raw, "utf8") : raw);
      });
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => {});
    return next;
  }

  close(): void {
    this.closedWhy ??= `${this.path} closed by the harness`;
    this.socket.destroy();
  }
}
