import { lstat } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { dirname } from "node:path";
import { OutliveError } from "../errors.ts";
import { RpcEndpoint } from "../rpc/endpoint.ts";
import { DEFAULT_MAX_LINE_BYTES, NOTIFICATIONS, PROTOCOL_VERSION } from "../rpc/protocol.ts";
import { controlSocketPath } from "../rpc/socket-path.ts";

/**
 * What connectHolder and askHolder return when no holder answers on the
 * storage's socket (none runs, or it serves none).
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { askHolder, NO_HOLDER } from "./socket-client.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-noholder-"));
 * console.log((await askHolder(storage, "list", {})) === NO_HOLDER); // true
 * rmSync(storage, { recursive: true });
 * ```
 */
export const NO_HOLDER = Symbol("no holder");

/** An initialized connection to the storage's holder. */
export interface HolderConnection {
  /** The holder's `initialize` answer. */
  readonly hello: Record<string, unknown>;
  request(method: string, params?: unknown): Promise<unknown>;
  /** Resolves when the holder goes (closed its end, or died). */
  readonly closed: Promise<void>;
  close(): void;
}

/**
 * Connects to the supervisor holding the storage and initializes; NO_HOLDER
 * when nothing listens. The socket's directory must be this user's and
 * closed to others, or it is not trusted. `onNotification` gets the
 * holder's `completion` and `output` notifications.
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { Supervisor } from "../supervisor/supervisor.ts";
 * import { connectHolder, NO_HOLDER } from "./socket-client.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-connect-"));
 * const sup = await Supervisor.open({ storage });
 * const done: string[] = [];
 * const holder = await connectHolder(storage, { onNotification: (method, params) => void done.push((params as { id: string }).id) });
 * if (holder === NO_HOLDER) throw new Error("no holder");
 * console.log(holder.hello.role); // "holder"
 * await holder.request("completions/subscribe", {});
 * const task = await holder.request("run", { argv: ["true"] }) as { id: string };
 * await holder.request("wait", { id: task.id });
 * await new Promise((r) => setTimeout(r, 100));
 * console.log(done.includes(task.id)); // true
 * holder.close();
 * await sup.close();
 * rmSync(storage, { recursive: true });
 * ```
 */
export async function connectHolder(
  root: string,
  options: { clientName?: string; onNotification?: (method: string, params: unknown) => Promise<void> | void; signal?: AbortSignal } = {},
): Promise<HolderConnection | typeof NO_HOLDER> {
  const path = controlSocketPath(root);
  try {
    const dir = await lstat(dirname(path));
    const uid = process.getuid?.();
    if (!dir.isDirectory() || (uid !== undefined && dir.uid !== uid) || (dir.mode & 0o077) !== 0) {
      throw new OutliveError("E_STORAGE", `The control directory ${dirname(path)} is not this user's alone (mode ${(dir.mode & 0o777).toString(8)}, uid ${dir.uid}); refusing to use it`);
    }
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return NO_HOLDER;
    throw error;
  }
  const socket = await new Promise<Socket | typeof NO_HOLDER>((resolve, reject) => {
    const s = connect(path);
    s.once("connect", () => resolve(s));
    s.once("error", (error: Error & { code?: string }) => {
      if (error.code === "ENOENT" || error.code === "ECONNREFUSED") resolve(NO_HOLDER);
      else reject(new OutliveError("E_CONTROL", `The control channel ${path} failed: ${error.message}`));
    });
  });
  if (socket === NO_HOLDER) return NO_HOLDER;
  socket.on("error", () => {});
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  const endpoint = new RpcEndpoint({ input: socket, output: socket }, {
    methods: NOTIFICATIONS,
    handle: async (method, params) => {
      await options.onNotification?.(method, params);
      return null;
    },
    maxLineBytes: 64 * DEFAULT_MAX_LINE_BYTES,
    requireInitialize: false,
    onClose: () => {
      socket.destroy();
      markClosed();
    },
  });
  const abort = () => endpoint.close();
  options.signal?.addEventListener("abort", abort, { once: true });
  void closed.then(() => options.signal?.removeEventListener("abort", abort));
  const request = (method: string, params?: unknown) =>
    endpoint.request(method, params).catch((error) => {
      if (endpoint.isClosed && !(error instanceof OutliveError)) {
        throw new OutliveError("E_CLOSED", `The supervisor holding ${root} closed the connection before answering ${method}; ask again`);
      }
      throw error;
    });
  let hello: Record<string, unknown>;
  try {
    hello = await request("initialize", { protocolVersion: PROTOCOL_VERSION, clientInfo: { name: options.clientName ?? "outlive" } }) as Record<string, unknown>;
  } catch (error) {
    endpoint.close();
    if ((error as OutliveError).code === "E_CLOSED") return NO_HOLDER;
    throw error;
  }
  return { hello, request, closed, close: () => endpoint.close() };
}

/**
 * Asks the supervisor holding the storage to carry out one method, and
 * returns its answer; NO_HOLDER when nothing listens.
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { Supervisor } from "../supervisor/supervisor.ts";
 * import { askHolder } from "./socket-client.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-ctl-"));
 * const sup = await Supervisor.open({ storage });
 * const task = await askHolder(storage, "run", { argv: ["true"] }) as { id: string };
 * console.log(((await askHolder(storage, "wait", { id: task.id })) as { state: string }).state); // "exited"
 * await sup.close();
 * rmSync(storage, { recursive: true });
 * ```
 */
export async function askHolder(root: string, method: string, params: unknown, options: { signal?: AbortSignal } = {}): Promise<unknown> {
  const connection = await connectHolder(root, { signal: options.signal });
  if (connection === NO_HOLDER) return NO_HOLDER;
  try {
    if (options.signal?.aborted) throw options.signal.reason;
    const answer = connection.request(method, params);
    if (!options.signal) return await answer;
    // Given up on (a wait's own timeout): the connection goes, so nothing keeps this process alive for it.
    return await Promise.race([answer, new Promise((_, reject) => options.signal!.addEventListener("abort", () => reject(options.signal!.reason), { once: true }))]);
  } finally {
    connection.close();
  }
}

/**
 * Whether a supervisor holding the storage answers on its socket now (it initializes, then goes).
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { Supervisor } from "../supervisor/supervisor.ts";
 * import { holderAnswers } from "./socket-client.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-answers-"));
 * console.log(await holderAnswers(storage)); // false
 * const sup = await Supervisor.open({ storage });
 * console.log(await holderAnswers(storage)); // true
 * await sup.close();
 * rmSync(storage, { recursive: true });
 * ```
 */
export async function holderAnswers(root: string): Promise<boolean> {
  const connection = await connectHolder(root).catch((): typeof NO_HOLDER => NO_HOLDER);
  if (connection === NO_HOLDER) return false;
  connection.close();
  return true;
}
