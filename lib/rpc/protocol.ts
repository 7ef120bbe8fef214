import { OutliveError } from "../errors.ts";

/**
 * The protocol versions this server speaks; `initialize` refuses any other.
 *
 * @example
 * ```ts
 * import { PROTOCOL_VERSIONS } from "./protocol.ts";
 * console.log(PROTOCOL_VERSIONS); // ["1"]
 * ```
 */
export const PROTOCOL_VERSIONS = ["1"] as const;
export const PROTOCOL_VERSION = PROTOCOL_VERSIONS[PROTOCOL_VERSIONS.length - 1];

/**
 * Every method a client may call, in the order the README's table lists them.
 *
 * @example
 * ```ts
 * import { METHODS } from "./protocol.ts";
 * console.log(METHODS.includes("completions/subscribe"), METHODS[0]); // true "initialize"
 * ```
 */
export const METHODS = [
  "initialize", "run", "get", "list", "kill", "wait", "ack", "remove", "prune", "output", "write", "resize", "census",
  "completions/subscribe", "completions/unsubscribe", "output/follow", "output/unfollow", "drain",
] as const;
export type MethodName = (typeof METHODS)[number];

/**
 * The notifications a server sends: `completion` (a task ended, to a
 * subscriber of `completions/subscribe`), `output` (a followed task's
 * new output, to a follower of `output/follow`) and `ready` (a task's
 * readiness condition held, to a subscriber of `completions/subscribe`).
 *
 * @example
 * ```ts
 * import { NOTIFICATIONS } from "./protocol.ts";
 * console.log(NOTIFICATIONS.includes("completion")); // true
 * ```
 */
export const NOTIFICATIONS = ["completion", "output", "ready"] as const;

/**
 * JSON-RPC 2.0's own error codes, and the ones outlive adds in the server range.
 *
 * @example
 * ```ts
 * import { RPC_ERRORS } from "./protocol.ts";
 * console.log(RPC_ERRORS.invalidParams, RPC_ERRORS.outlive); // -32602 -32000
 * ```
 */
export const RPC_ERRORS = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  /** outlive's own failures; `data.code` says which (E_NO_TASK, …). */
  outlive: -32000,
  /** A method before `initialize` (LSP's code for it). */
  notInitialized: -32002,
} as const;

/** A request line longer than this (bytes, without its newline) is refused, and the server reads on. */
export const DEFAULT_MAX_LINE_BYTES = 1 << 20;

/**
 * An error as the wire carries it: a JSON-RPC error object's three fields.
 *
 * @example
 * ```ts
 * import { RPC_ERRORS, RpcError } from "./protocol.ts";
 * const error = new RpcError(RPC_ERRORS.methodNotFound, "Method not found: nap");
 * console.log(error.toObject()); // { code: -32601, message: "Method not found: nap" }
 * ```
 */
export class RpcError extends Error {
  constructor(readonly code: number, message: string, readonly data?: Record<string, unknown>) {
    super(message);
    this.name = "RpcError";
  }

  toObject(): { code: number; message: string; data?: Record<string, unknown> } {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data };
  }
}

/**
 * What a thrown error becomes on the wire: outlive's bad options are bad
 * params (-32602), its other failures -32000, each with `data.code`; what
 * is neither (a bug) is an internal error whose message says so. Pure.
 *
 * @example
 * ```ts
 * import { OutliveError } from "../errors.ts";
 * import { toRpcError } from "./protocol.ts";
 * console.log(toRpcError(new OutliveError("E_NO_TASK", "No task t-1")).toObject());
 * // { code: -32000, message: "No task t-1", data: { code: "E_NO_TASK" } }
 * ```
 */
export function toRpcError(error: unknown): RpcError {
  if (error instanceof RpcError) return error;
  if (error instanceof OutliveError) {
    const bad = error.code === "E_BAD_OPTION" || error.code === "E_BAD_ID";
    // The library's checks name the option as `name` in their message; the wire says it in data too.
    // E_BAD_ID is the task id's own check (its message quotes the value, not the name): the param is `id`.
    const param = !bad ? undefined : error.code === "E_BAD_ID" ? "id" : /`([^`]+)`/.exec(error.message)?.[1];
    // E_NOT_READY carries the task as it was, so a client sees its state and reason without asking again.
    const task = (error as { task?: unknown }).task;
    const data = param ? { code: error.code, param } : task !== undefined ? { code: error.code, task } : { code: error.code };
    return new RpcError(bad ? RPC_ERRORS.invalidParams : RPC_ERRORS.outlive, error.message, data);
  }
  const code = (error as { code?: unknown })?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof code === "string" && code.startsWith("E_")) return new RpcError(RPC_ERRORS.outlive, message, { code });
  return new RpcError(RPC_ERRORS.internal, `internal error: ${message}`);
}

/**
 * The error a client raises for an error object it received: an OutliveError
 * when it names outlive's code (so callers switch on `code` as in process).
 */
export function fromRpcError(error: { code: number; message: string; data?: unknown }): Error {
  const code = (error.data as { code?: unknown } | undefined)?.code;
  const task = (error.data as { task?: unknown } | undefined)?.task;
  if (typeof code === "string" && code.startsWith("E_")) {
    const own = new OutliveError(code as never, error.message);
    return task === undefined ? own : Object.assign(own, { task });
  }
  return new RpcError(error.code, error.message, error.data as Record<string, unknown> | undefined);
}

/**
 * The version an `initialize` asks for, when this server speaks it; else the
 * refusal, with the versions it speaks. Pure.
 *
 * @example
 * ```ts
 * import { agreedVersion } from "./protocol.ts";
 * console.log(agreedVersion({ protocolVersion: "1" })); // "1"
 * try { agreedVersion({ protocolVersion: "9" }); } catch (e) { console.log((e as { data: unknown }).data); }
 * // { code: "E_PROTOCOL_VERSION", param: "protocolVersion", supported: ["1"] }
 * ```
 */
export function agreedVersion(params: unknown): string {
  const version = (params as { protocolVersion?: unknown } | null)?.protocolVersion;
  if (typeof version === "string" && (PROTOCOL_VERSIONS as readonly string[]).includes(version)) return version;
  throw new RpcError(RPC_ERRORS.invalidParams, `initialize: this server speaks protocol ${PROTOCOL_VERSIONS.map((v) => JSON.stringify(v)).join(", ")}, not ${JSON.stringify(version)}`, {
    code: "E_PROTOCOL_VERSION", param: "protocolVersion", supported: [...PROTOCOL_VERSIONS],
  });
}
