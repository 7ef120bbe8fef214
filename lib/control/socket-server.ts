import { chmod, lstat, mkdir, unlink } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { dirname } from "node:path";
import { controlSocketPath, MAX_SOCKET_PATH } from "../rpc/socket-path.ts";
import type { ControlTarget } from "./target.ts";
import { RpcEndpoint } from "../rpc/endpoint.ts";
import { LocalSession, type ServerIdentity } from "./local-session.ts";
import { DEFAULT_MAX_LINE_BYTES, METHODS } from "../rpc/protocol.ts";


export interface SocketServerOptions {
  version: string;
  maxLineBytes?: number;
  log(line: string): void;
}

/**
 * The holder's end of the storage's control socket: the wire protocol, a
 * session per connection, as many requests on each as the client sends.
 * Only the holder starts it (after taking the lock), so a socket file found
 * in its place is a dead holder's and is replaced. Neither Node nor Deno
 * gives the peer's credentials, so who may connect is decided by the
 * directory: 0700 and this user's, the socket 0600.
 */
export class SocketServer {
  private readonly sessions = new Set<{ session: LocalSession; endpoint: RpcEndpoint; socket: Socket }>();

  private constructor(private readonly server: Server, readonly path: string) {}

  /** Serves `sup` on its storage's socket; null (with the reason logged) where a socket cannot be had. */
  static async start(sup: ControlTarget, options: SocketServerOptions): Promise<SocketServer | null> {
    // Without a channel the supervisor still works; the CLI then waits for the storage instead.
    return SocketServer.listen(sup, options).catch((error) => {
      options.log(`no control channel: ${(error as Error).message}`);
      return null;
    });
  }

  private static async listen(sup: ControlTarget, options: SocketServerOptions): Promise<SocketServer | null> {
    const path = controlSocketPath(sup.store.root);
    if (Buffer.byteLength(path) > MAX_SOCKET_PATH) {
      options.log(`no control channel: the socket path ${path} is longer than ${MAX_SOCKET_PATH} bytes; the CLI waits for the storage instead`);
      return null;
    }
    await mkdir(dirname(path), { mode: 0o700, recursive: true });
    const dir = await lstat(dirname(path));
    if (!dir.isDirectory() || dir.isSymbolicLink()) {
      options.log(`no control channel: ${dirname(path)} is not a directory`);
      return null;
    }
    await chmod(dirname(path), 0o700);
    await unlink(path).catch(() => {});
    const server = createServer();
    const socketServer = new SocketServer(server, path);
    const identity: ServerIdentity = { version: options.version, role: "holder" };
    server.on("connection", (socket) => socketServer.serve(socket, sup, identity, options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES));
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
    return socketServer;
  }

  /**
   * Stops taking connections and ends each session: requests under way
   * finish (a run, a kill's ladder), except waits, which are told the
   * supervisor closed so their client asks again.
   */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    await Promise.all([...this.sessions].map(async ({ session, endpoint, socket }) => {
      await session.close();
      // The last answers are written before the connection ends.
      await new Promise<void>((resolve) => (socket.writableLength === 0 ? resolve() : socket.once("drain", () => resolve())));
      endpoint.close();
      socket.destroy();
    }));
    await unlink(this.path).catch(() => {});
    await closed;
  }

  private serve(socket: Socket, sup: ControlTarget, identity: ServerIdentity, maxLineBytes: number): void {
    socket.on("error", () => {});
    let endpoint: RpcEndpoint | null = null;
    const session = new LocalSession(sup, { identity, notify: (method, params) => endpoint!.notify(method, params) });
    endpoint = new RpcEndpoint({ input: socket, output: socket }, {
      methods: METHODS,
      handle: (method, params) => session.call(method, params),
      maxLineBytes,
      requireInitialize: true,
      onClose: () => {
        this.sessions.delete(entry);
        void session.close();
      },
    });
    const entry = { session, endpoint, socket };
    this.sessions.add(entry);
  }
}
