import { readTail } from "../../lib/observe/output-tail.ts";
import { checkTaskId, defaultStorageRoot, taskPaths } from "../../lib/mod.ts";
import { parseFlags } from "./supervisor-flags.ts";
import { help, number } from "./run.ts";
import { UsageError } from "./usage-error.ts";

export const LOGS_HELP = `usage: outlive logs ID [--stderr] [--tail BYTES] [--storage DIR]

Prints what the task wrote to stdout (or stderr), all of it or the last BYTES.`;

export async function logsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    storage: { type: "string" },
    stderr: { type: "boolean" },
    tail: { type: "string" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  });
  if (values.help) return help(LOGS_HELP);
  if (positionals.length !== 1) throw new UsageError("logs takes exactly one task id");
  const paths = taskPaths(values.storage ?? defaultStorageRoot(), checkTaskId(positionals[0]));
  const bytes = values.tail === undefined ? Number.MAX_SAFE_INTEGER : number("--tail", values.tail);
  const file = values.stderr ? paths.stderr : paths.stdout;
  const { text, size } = await readTail(file, Math.min(bytes, 256 * 1024 * 1024));
  if (values.json) console.log(JSON.stringify({ id: positionals[0], stream: values.stderr ? "stderr" : "stdout", size, text }));
  else process.stdout.write(text);
  return 0;
}
