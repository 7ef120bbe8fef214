/**
 * The published JSON Schema of outlive's wire protocol (draft 2020-12):
 * every method's params and result, every notification, the error codes.
 * Clients in any language validate their messages against the file itself;
 * it ships in the package beside this module, and `outlive/rpc-schema.json`
 * names it in the package's exports.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * The schema's `$id`: register the document under it, then refer to
 * `${RPC_SCHEMA_ID}#/methods/run/result` and the like (a `/` in a method's
 * name is `~1` in the pointer).
 *
 * @example
 * ```ts
 * import { RPC_SCHEMA_ID } from "./mod.ts";
 * console.log(`${RPC_SCHEMA_ID}#/methods/completions~1subscribe/params`); // "urn:outlive:rpc:1#/methods/completions~1subscribe/params"
 * ```
 */
export const RPC_SCHEMA_ID = "urn:outlive:rpc:1";

/** The schema's file name, the same in the sources and in the package. */
const FILE = "outlive-rpc.schema.json";

/**
 * The absolute path of the schema file. Run from the sources (Deno, or a test
 * through vitest), it lies beside this module; run from the compiled `dist/`
 * (tsc copies no JSON), it is the package's `lib/` copy, three levels up.
 *
 * @example
 * ```ts
 * import { readFileSync } from "node:fs";
 * import { rpcSchemaPath } from "./mod.ts";
 * const schema = JSON.parse(readFileSync(rpcSchemaPath(), "utf8"));
 * console.log(Object.keys(schema.methods).length, schema.$id); // 18 "urn:outlive:rpc:1"
 * ```
 */
export function rpcSchemaPath(): string {
  const beside = new URL(`./${FILE}`, import.meta.url);
  if (existsSync(beside)) return fileURLToPath(beside);
  // dist/lib/rpc/schema/mod.js → <package>/lib/rpc/schema/outlive-rpc.schema.json
  return fileURLToPath(new URL(`../../../../lib/rpc/schema/${FILE}`, import.meta.url));
}
