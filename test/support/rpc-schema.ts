import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import { RPC_SCHEMA_ID, rpcSchemaPath } from "../../lib/rpc/schema/mod.ts";

/** The published schema, as a client in another language would read it: the file itself. */
export const rpcSchema = JSON.parse(readFileSync(rpcSchemaPath(), "utf8")) as {
  methods: Record<string, { params: unknown; result: unknown }>;
  notifications: Record<string, { params: unknown }>;
};

/**
 * The schema compiled by ajv in strict mode, so a schema keyword ajv does not
 * know (a typo) fails here rather than passing everything. `methods`,
 * `notifications` and `errors` are the document's own lookup tables, declared
 * as keywords without validation. Union types (`["string", "null"]`) and an
 * `if`/`then` whose `required` names a property the enclosing schema defines
 * are plain JSON Schema that ajv's strict mode asks to be allowed by name.
 */
const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, strictRequired: false, allErrors: true });
ajv.addVocabulary(["methods", "notifications", "errors"]);
ajv.addSchema(rpcSchema);

const cache = new Map<string, ReturnType<typeof ajv.compile>>();

/**
 * A place in the schema as a JSON pointer, its segments escaped: a method's
 * name may hold a `/` (`completions/subscribe` is `methods/completions~1subscribe`).
 */
export function at(...segments: string[]): string {
  return segments.map((s) => s.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");
}

/** The validator for a place in the schema, e.g. `at("methods", "run", "result")`, `$defs/TaskRecord`. */
export function validatorAt(pointer: string): ReturnType<typeof ajv.compile> {
  let v = cache.get(pointer);
  if (!v) {
    v = ajv.getSchema(`${RPC_SCHEMA_ID}#/${pointer}`);
    if (!v) throw new Error(`the schema has nothing at #/${pointer}`);
    cache.set(pointer, v);
  }
  return v;
}

/** Null when `value` matches the schema at `pointer`, else ajv's errors as one line. */
export function schemaProblem(pointer: string, value: unknown): string | null {
  const v = validatorAt(pointer);
  if (v(value)) return null;
  return ajv.errorsText(v.errors, { dataVar: pointer });
}

/** Throws, naming what did not match and why, unless `value` matches the schema at `pointer`. */
export function assertMatches(pointer: string, value: unknown): void {
  const problem = schemaProblem(pointer, value);
  if (problem) throw new Error(`${problem}\nin ${JSON.stringify(value).slice(0, 2000)}`);
}
