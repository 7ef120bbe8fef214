import { chmod, lstat, mkdir, unlink } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { dirname } from "node:path";
import { type ControlResponse, controlSocketPath, MAX_LINE_BYTES, MAX_SOCKET_PATH, parseRequest } from "./protocol.ts";
import { type ControlTarget, dispatch } from "./dispatch.ts";

/**
 * The holder's end of the control channel: one request per connection, one
 * JSON line each way. Only the storage's holder starts it (after taking the
 * lock), so a socket file found in its place is a dead holder's and is replaced.
 */
export class ControlServer {
  private readonly inFlight = new Set<{ socket: Socket; op: string; done: Promise<void> }>();
  private readonly sockets = new Set<Socket>();
  private closing = false;

  private constructor(private readonly server: Server, readonly path: string) {}

  /** Serves `target` on the storage's socket; null (with the reason logged) where a socket cannot be had. */
  static async start(root: string, target: ControlTarget, log: (line: string) => void): Promise<ControlServer | null> {
    // Without a channel the supervisor still works; the CLI then waits for the storage instead.
    return ControlServer.listen(root, target, log).catch((error) => {
      log(`no control channel: ${(error as Error).message}`);
      return null;
    });
  }

  private static async listen(root: string, target: ControlTarget, log: (line: string) => void): Promise<ControlServer | null> {
    const path = controlSocketPath(root);
    if (Buffer.byteLength(path) > MAX_SOCKET_PATH) {
      log(`no control channel: the socket path ${path} is longer than ${MAX_SOCKET_PATH} bytes; the CLI waits for the storage instead`);
      return null;
    }
    await mkdir(dirname(path), { mode: 0o700, recursive: true });
    const dir = await lstat(dirname(path));
    if (!dir.isDirectory() || dir.isSymbolicLink()) {
      log(`no control channel: ${dirname(path)} is not a directory`);
      return null;
    }
    await chmod(dirname(path), 0o700);
    await unlink(path).catch(() => {});
    const server = createServer();
    const control = new ControlServer(server, path);
    server.on("connection", (socket) => control.serve(socket, target));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, () => resolve());
    });
    try {
      await chmod(path, 0o600);
    } catch (error) {
      server.close();
      throw error;
    }
    return control;
  }

  /**
   * Stops taking requests. Those under way finish (a run, a kill's ladder),
   * except waits, which are told the supervisor closed so their client asks again.
   */
  async close(): Promise<void> {
    this.closing = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const item of this.inFlight) {
      if (item.op === "wait") reply(item.socket, { ok: false, error: { code: "E_CLOSED", message: "the supervisor closed while waiting; ask again" } });
    }
    // A wait's answer may never come now (nothing observes the task any more); it was told so above.
    await Promise.allSettled([...this.inFlight].filter((i) => i.op !== "wait").map((i) => i.done));
    for (const socket of this.sockets) if (!socket.writableEnded) socket.destroy();
    await unlink(this.path).catch(() => {});
    await closed;
  }

  private serve(socket: Socket, target: ControlTarget): void {
    let buffered = "";
    socket.setEncoding("utf8");
    socket.on("error", () => {});
    this.sockets.add(socket);
    socket.on("close", () => this.sockets.delete(socket));
    const onData = (chunk: string) => {
      buffered += chunk;
      const end = buffered.indexOf("\n");
      if (end < 0) {
        if (Buffer.byteLength(buffered) > MAX_LINE_BYTES) reply(socket, { ok: false, error: { code: "E_BAD_OPTION", message: "request too long" } });
        return;
      }
      socket.off("data", onData);
      const parsed = parseRequest(buffered.slice(0, end));
      if (!parsed.ok) return reply(socket, { ok: false, error: { code: "E_BAD_OPTION", message: parsed.message } });
      if (this.closing) return reply(socket, { ok: false, error: { code: "E_CLOSED", message: "the supervisor is closing; ask again" } });
      const done = Promise.resolve()
        .then(() => dispatch(target, parsed.request))
        .then(
          (result) => reply(socket, { ok: true, result }),
          (error) => reply(socket, { ok: false, error: { code: (error as { code?: string }).code ?? "E_CONTROL", message: (error as Error).message } }),
        );
      const item = { socket, op: parsed.request.op, done };
      this.inFlight.add(item);
      void done.finally(() => this.inFlight.delete(item));
    };
    socket.on("data", onData);
  }
}

function reply(socket: Socket, response: ControlResponse): void {
  if (socket.writable) socket.end(`${JSON.stringify(response)}\n`);
}
