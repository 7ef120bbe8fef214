import { lstat } from "node:fs/promises";
import { connect } from "node:net";
import { dirname } from "node:path";
import { OutliveError } from "../errors.ts";
import { type ControlOp, type ControlResponse, controlSocketPath } from "./protocol.ts";

/**
 * What askHolder returns when no holder answers on the storage's channel (none runs, or it serves none).
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { askHolder, NO_HOLDER } from "./client.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-noholder-"));
 * console.log((await askHolder(storage, "hello", {})) === NO_HOLDER); // true
 * rmSync(storage, { recursive: true });
 * ```
 */
export const NO_HOLDER = Symbol("no holder");

/**
 * Asks the supervisor holding the storage to carry out `op`, and returns its
 * answer; NO_HOLDER when nothing listens. The channel's directory must be
 * this user's and closed to others, or it is not trusted.
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { Supervisor } from "../supervisor/supervisor.ts";
 * import { askHolder } from "./client.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-ctl-"));
 * const sup = await Supervisor.open({ storage, log: () => {} });
 * const task = await askHolder(storage, "run", { argv: ["true"] }) as { id: string };
 * console.log(((await askHolder(storage, "wait", { id: task.id })) as { state: string }).state); // "exited"
 * await sup.close();
 * rmSync(storage, { recursive: true });
 * ```
 */
export async function askHolder(root: string, op: ControlOp, args: Record<string, unknown>, options: { signal?: AbortSignal } = {}): Promise<unknown> {
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
  const response = await new Promise<ControlResponse | typeof NO_HOLDER>((resolve, reject) => {
    const socket = connect(path);
    let text = "";
    let connected = false;
    socket.setEncoding("utf8");
    // Given up on (a wait's own timeout): the connection goes, so nothing keeps this process alive for it.
    options.signal?.addEventListener("abort", () => {
      socket.destroy();
      reject(options.signal!.reason);
    }, { once: true });
    socket.on("connect", () => {
      connected = true;
      socket.write(`${JSON.stringify({ op, args })}\n`);
    });
    socket.on("data", (chunk: string) => (text += chunk));
    socket.on("error", (error: Error & { code?: string }) => {
      if (!connected && (error.code === "ENOENT" || error.code === "ECONNREFUSED")) resolve(NO_HOLDER);
      else reject(new OutliveError("E_CONTROL", `The control channel ${path} failed: ${error.message}`));
    });
    socket.on("close", () => {
      if (!connected) return;
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(new OutliveError("E_CONTROL", `The supervisor holding ${root} closed the control channel without an answer to ${op}`));
      }
    });
  });
  if (response === NO_HOLDER) return NO_HOLDER;
  if (response.ok) return response.result;
  throw new OutliveError(response.error.code as never, response.error.message);
}
