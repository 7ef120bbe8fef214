import { parseFlags, SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "./supervisor-flags.ts";
import { withSupervisor } from "./storage-view.ts";
import { taskSummary } from "./task-table.ts";
import { UsageError } from "./usage-error.ts";

export const RUN_HELP = `usage: outlive run [--id ID] [--timeout SECONDS] [--memory-max BYTES] [--key KEY] [--shell STRING [--shell-path PATH] | -- CMD ARG…]

Starts a task and prints its id once it runs. The task outlives this command.
  --id ID            task id (default: generated, t-<16 hex>)
  --timeout SECONDS  end the task as timed_out after this long (default: the 24 h ceiling)
  --memory-max BYTES cap its memory (cgroup placements only)
  --shell STRING     run STRING with a shell (-c) instead of an argv
  --shell-path PATH  the shell for --shell (default: bash where installed, else /bin/sh)
${SUPERVISOR_FLAGS_HELP}`;

export async function runCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    ...SUPERVISOR_FLAGS,
    id: { type: "string" },
    timeout: { type: "string" },
    "memory-max": { type: "string" },
    key: { type: "string" },
    shell: { type: "string" },
    "shell-path": { type: "string" },
  });
  if (values.help) return help(RUN_HELP);
  if ((values.shell === undefined) === (positionals.length === 0)) {
    throw new UsageError("run needs a command: --shell STRING or -- CMD ARG…, not both");
  }
  if (values["shell-path"] !== undefined && values.shell === undefined) throw new UsageError("--shell-path goes with --shell STRING");
  const timeoutSeconds = values.timeout === undefined ? undefined : number("--timeout", values.timeout);
  const memoryMaxBytes = values["memory-max"] === undefined ? undefined : number("--memory-max", values["memory-max"]);
  const record = await withSupervisor(supervisorOptions(values), (sup) =>
    sup.run({
      id: values.id,
      key: values.key,
      timeoutSeconds,
      memoryMaxBytes,
      ...(values.shell !== undefined ? { shell: values.shell, shellPath: values["shell-path"] } : { argv: positionals }),
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
