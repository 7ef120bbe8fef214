import { parseFlags, SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "./supervisor-flags.ts";
import { withSupervisor } from "./storage-view.ts";
import { taskSummary } from "./task-table.ts";
import { UsageError } from "./usage-error.ts";

export const RUN_HELP = `usage: outlive run [--id ID] [--timeout SECONDS] [--memory-max BYTES] [--key KEY] [--pty [--cols C --rows R]] [--shell STRING | -- CMD ARG…]

Starts a task and prints its id once it runs. The task outlives this command.
  --id ID            task id (default: generated, t-<16 hex>)
  --timeout SECONDS  end the task as timed_out after this long (default: the 24 h ceiling)
  --memory-max BYTES cap its memory (cgroup placements only)
  --shell STRING     run STRING with /bin/sh -c instead of an argv
  --pty              run it on a terminal held inside its placement (see send, resize, attach)
  --cols C, --rows R that terminal's size (default 80 x 24)
${SUPERVISOR_FLAGS_HELP}`;

export async function runCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    ...SUPERVISOR_FLAGS,
    id: { type: "string" },
    timeout: { type: "string" },
    "memory-max": { type: "string" },
    key: { type: "string" },
    shell: { type: "string" },
    pty: { type: "boolean" },
    cols: { type: "string" },
    rows: { type: "string" },
  });
  if (values.help) return help(RUN_HELP);
  if ((values.shell === undefined) === (positionals.length === 0)) {
    throw new UsageError("run needs a command: --shell STRING or -- CMD ARG…, not both");
  }
  const timeoutSeconds = values.timeout === undefined ? undefined : number("--timeout", values.timeout);
  const memoryMaxBytes = values["memory-max"] === undefined ? undefined : number("--memory-max", values["memory-max"]);
  if (!values.pty && (values.cols !== undefined || values.rows !== undefined)) throw new UsageError("--cols and --rows need --pty");
  const pty = values.pty
    ? { cols: values.cols === undefined ? undefined : number("--cols", values.cols), rows: values.rows === undefined ? undefined : number("--rows", values.rows) }
    : undefined;
  const record = await withSupervisor(supervisorOptions(values), (sup) =>
    sup.run({
      id: values.id,
      key: values.key,
      timeoutSeconds,
      memoryMaxBytes,
      pty,
      ...(values.shell !== undefined ? { shell: values.shell } : { argv: positionals }),
    }));
  console.log(values.json ? JSON.stringify(taskSummary(record)) : record.id);
  return 0;
}

export function number(flag: string, text: string): number {
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n)) throw new UsageError(`${flag} takes a number, got ${JSON.stringify(text)}`);
  return n;
}

export function help(text: string): number {
  console.log(text);
  return 0;
}
