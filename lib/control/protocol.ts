import { storagePaths } from "../store/layout.ts";

/**
 * What a client may ask of the supervisor that holds the storage.
 *
 * @example
 * ```ts
 * import { CONTROL_OPS } from "./protocol.ts";
 * console.log(CONTROL_OPS.join(" ")); // "run kill wait ack remove prune hello"
 * ```
 */
export const CONTROL_OPS = ["run", "kill", "wait", "ack", "remove", "prune", "hello"] as const;
export type ControlOp = (typeof CONTROL_OPS)[number];

export interface ControlRequest {
  op: ControlOp;
  args: Record<string, unknown>;
}

export type ControlResponse = { ok: true; result: unknown } | { ok: false; error: { code: string; message: string } };

/** A request line longer than this is not one a client of ours sends. */
export const MAX_LINE_BYTES = 1 << 20;

/**
 * The socket of a storage's control channel. It sits in a directory of its
 * own, made 0700 by the holder, so only the storage's owner (and root) can
 * reach it whatever the storage directory's own read bits are.
 *
 * @example
 * ```ts
 * import { controlSocketPath } from "./protocol.ts";
 * console.log(controlSocketPath("/srv/outlive")); // "/srv/outlive/control/supervisor.sock"
 * ```
 */
export function controlSocketPath(root: string): string {
  return storagePaths(root).controlSocket;
}

/** The longest path a unix socket address holds on Linux (sun_path less its NUL). */
export const MAX_SOCKET_PATH = 107;

/**
 * Reads one request line; says what is wrong instead of throwing. Pure.
 *
 * @example
 * ```ts
 * import { parseRequest } from "./protocol.ts";
 * console.log(parseRequest('{"op":"kill","args":{"id":"t-1"}}')); // { ok: true, request: { op: "kill", args: { id: "t-1" } } }
 * console.log(parseRequest('{"op":"rm -rf"}').ok); // false
 * ```
 */
export function parseRequest(line: string): { ok: true; request: ControlRequest } | { ok: false; message: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, message: "the request is not JSON" };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, message: "the request is not an object" };
  const { op, args = {} } = value as { op?: unknown; args?: unknown };
  if (!CONTROL_OPS.includes(op as ControlOp)) return { ok: false, message: `unknown op ${JSON.stringify(op)}; expected one of ${CONTROL_OPS.join(", ")}` };
  if (typeof args !== "object" || args === null || Array.isArray(args)) return { ok: false, message: "args must be an object" };
  return { ok: true, request: { op: op as ControlOp, args: args as Record<string, unknown> } };
}
