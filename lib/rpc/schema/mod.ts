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
import { dirname, join } from "node:path";
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
 * (tsc copies no JSON) or from the bundle (`dist/pkg/outlive.js`), it is the
 * package's `lib/rpc/schema/` copy, found in the nearest folder above that has it.
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
  // dist/lib/rpc/schema/mod.js or dist/pkg/outlive.js → <package>/lib/rpc/schema/outlive-rpc.schema.json
  const here = fileURLToPath(import.meta.url);
  for (let dir = dirname(here); dirname(dir) !== dir; dir = dirname(dir)) {
    const copy = join(dir, "lib", "rpc", "schema", FILE);
    if (existsSync(copy)) return copy;
  }
  throw new Error(`the wire protocol's schema (${FILE}) is neither beside ${here} nor in a lib/rpc/schema/ above it`);
}
