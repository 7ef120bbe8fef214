import { describeValue } from "../errors.ts";
import { RPC_ERRORS, RpcError } from "../rpc/protocol.ts";

/** A param that is not what the method takes: -32602, naming it and what was expected. */
export function badParam(method: string, param: string, expected: string, value: unknown): RpcError {
  return new RpcError(RPC_ERRORS.invalidParams, `${method}: expected \`${param}\` to be ${expected}, got ${describeValue(value)}`, { code: "E_BAD_OPTION", param });
}

/**
 * Reads a method's params as an object whose names are all known; a
 * misspelt name is refused rather than silently ignored. Pure.
 *
 * @example
 * ```ts
 * import { paramsOf } from "./params.ts";
 * console.log(paramsOf("get", { id: "t-1" }, ["id"])); // { id: "t-1" }
 * try { paramsOf("get", { idd: "t-1" }, ["id"]); } catch (e) { console.log((e as Error).message); }
 * // get: expected `idd` to be one of the params id, got "t-1" (string)
 * ```
 */
export function paramsOf(method: string, params: unknown, names: readonly string[]): Record<string, unknown> {
  if (params === undefined || params === null) return {};
  if (typeof params !== "object" || Array.isArray(params)) throw badParam(method, "params", "an object (by-name params)", params);
  for (const [name, value] of Object.entries(params)) {
    if (!names.includes(name)) throw badParam(method, name, names.length > 0 ? `one of the params ${names.join(", ")}` : "absent (this method takes no params)", value);
  }
  return params as Record<string, unknown>;
}

export function taskId(method: string, p: Record<string, unknown>, name = "id"): string {
  const value = p[name];
  if (typeof value !== "string" || value === "") throw badParam(method, name, "a task id string", value);
  return value;
}

/** An optional whole number within [min, max]. */
export function optionalInteger(method: string, p: Record<string, unknown>, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const value = p[name];
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || (value as number) < min || (value as number) > max) {
    throw badParam(method, name, max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer from ${min} to ${max}`, value);
  }
  return value as number;
}

export function optionalString<T extends string>(method: string, p: Record<string, unknown>, name: string, allowed?: readonly T[]): T | undefined {
  const value = p[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || (allowed && !allowed.includes(value as T))) {
    throw badParam(method, name, allowed ? `one of ${allowed.map((a) => JSON.stringify(a)).join(", ")}` : "a string", value);
  }
  return value as T;
}

export function optionalBoolean(method: string, p: Record<string, unknown>, name: string): boolean | undefined {
  const value = p[name];
  if (value === undefined) return undefined;
  if (typeof value !== "boolean") throw badParam(method, name, "true or false", value);
  return value;
}
