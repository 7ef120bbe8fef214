/**
 * Why a parsed line cannot be a JSON-RPC 2.0 request or notification, or
 * null when it may be one (a batch, an array, is left to json-rpc-2.0, which
 * checks each member). json-rpc-2.0 reads `request.method` of whatever it is
 * given: `null` made it throw and ended the server. JSON-RPC 2.0 also wants
 * `method` a string and `id` a string, a number or null (an object id was
 * answered with the object). Pure.
 *
 * @example
 * ```ts
 * import { requestShapeProblem } from "./request-shape.ts";
 * console.log(requestShapeProblem(null)); // "a request is a JSON object, got null"
 * console.log(requestShapeProblem({ jsonrpc: "2.0", id: 1, method: 7 })); // "`method` must be a string, got 7"
 * console.log(requestShapeProblem({ jsonrpc: "2.0", id: 1, method: "list" })); // null
 * ```
 */
export function requestShapeProblem(value: unknown): string | null {
  if (Array.isArray(value)) return null;
  if (typeof value !== "object" || value === null) return `a request is a JSON object, got ${JSON.stringify(value)}`;
  const v = value as Record<string, unknown>;
  if (typeof v.method !== "string") return `\`method\` must be a string, got ${v.method === undefined ? "none" : JSON.stringify(v.method)}`;
  if ("id" in v && v.id !== null && typeof v.id !== "string" && typeof v.id !== "number") {
    return `\`id\` must be a string, a number or null, got ${JSON.stringify(v.id)}`;
  }
  return null;
}

/** The id to answer a request that is not one with: its own when it is a valid id, else null. */
export function answerableId(value: unknown): string | number | null {
  const id = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as { id?: unknown }).id : null;
  return typeof id === "string" || typeof id === "number" ? id : null;
}
