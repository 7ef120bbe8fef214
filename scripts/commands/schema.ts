import { readFileSync } from "node:fs";
import { rpcSchemaPath } from "../../lib/rpc/schema/mod.ts";
import { EXECUTABLE_ASSETS, executableText } from "../../lib/single-executable.ts";
import { help, parseFlags } from "../cli/flags.ts";
import { UsageError } from "../cli/usage-error.ts";

export const SCHEMA_HELP = `usage: outlive schema

Prints the JSON Schema (draft 2020-12) of the wire protocol that outlive serve and the
storage's control socket speak: every method's params and result, every notification,
the error codes. A client in any language can check its messages against it. It is the
package's lib/rpc/schema/outlive-rpc.schema.json; the single executable carries its own copy.`;

export async function schemaCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { help: { type: "boolean", short: "h" } });
  if (values.help) return help(SCHEMA_HELP);
  if (positionals.length > 0) throw new UsageError(`schema takes no arguments, got ${JSON.stringify(positionals.join(" "))}`);
  const text = executableText(EXECUTABLE_ASSETS.schema) ?? readFileSync(rpcSchemaPath(), "utf8");
  process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
  return 0;
}
