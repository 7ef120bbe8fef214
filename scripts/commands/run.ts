import { isAbsolute, resolve } from "node:path";
import type { TaskRecord } from "../../lib/mod.ts";
import { help, number, parseFlags, seconds } from "../cli/flags.ts";
import { lockWaitMs, SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "../cli/supervisor-flags.ts";
import { reachStorage } from "../cli/reach.ts";
import { taskSummary } from "../cli/task-table.ts";
import { UsageError } from "../cli/usage-error.ts";

export const RUN_HELP = `usage: outlive run [--id ID] [--cwd DIR] [--env NAME=VALUE]… [--key KEY] [--timeout DURATION] [--memory-max BYTES] [--max-output BYTES] [--pty [--cols C --rows R]] [--shell STRING [--shell-path PATH] | -- CMD ARG…]

Starts a task and prints its id once it runs. The task outlives this command. When a
supervisor holds the storage, it starts the task (through its control channel), with
its own environment plus --env.
  --id ID            task id (default: generated, t-<16 hex>)
  --cwd DIR          directory the task runs in (default: this one)
  --env NAME=VALUE   set a variable for the task (repeatable; default: this environment only)
  --key KEY          one task per key: a live task under KEY is superseded (killed) (default: none)
  --timeout DURATION end the task as timed_out after this long: 90s, 15m, 2h, or seconds (default: the 24 h ceiling)
  --memory-max BYTES cap its memory (cgroup placements only)
  --max-output BYTES keep at most this much of stdout and of stderr on disk, dropping the oldest (0: all; default 33554432, 32 MiB)
  --shell STRING     run STRING with a shell (-c) instead of an argv
  --shell-path PATH  the shell for --shell (default: bash where installed, else /bin/sh)
  --pty              run it on a terminal held inside its placement (see send, resize, attach)
  --cols C, --rows R that terminal's size (default 80 x 24)
${SUPERVISOR_FLAGS_HELP}
An argv command's program is looked up first (the task's PATH and cwd); when it cannot
run, nothing is started or stored and run exits 127 (not found) or 126 (not executable).`;

export async function runCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    ...SUPERVISOR_FLAGS,
    id: { type: "string" },
    cwd: { type: "string" },
    env: { type: "string", multiple: true },
    timeout: { type: "string" },
    "memory-max": { type: "string" },
    "max-output": { type: "string" },
    key: { type: "string" },
    shell: { type: "string" },
    pty: { type: "boolean" },
    cols: { type: "string" },
    rows: { type: "string" },
    "shell-path": { type: "string" },
  });
  if (values.help) return help(RUN_HELP);
  if ((values.shell === undefined) === (positionals.length === 0)) {
    throw new UsageError("run needs a command: --shell STRING or -- CMD ARG…, not both");
  }
  if (values["shell-path"] !== undefined && values.shell === undefined) throw new UsageError("--shell-path goes with --shell STRING");
  const env: Record<string, string> = {};
  for (const pair of (values.env as unknown as string[] | undefined) ?? []) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new UsageError(`--env takes NAME=VALUE, got ${JSON.stringify(pair)}`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  if (!values.pty && (values.cols !== undefined || values.rows !== undefined)) throw new UsageError("--cols and --rows need --pty");
  const pty = values.pty
    ? { cols: values.cols === undefined ? undefined : number("--cols", values.cols), rows: values.rows === undefined ? undefined : number("--rows", values.rows) }
    : undefined;
  const spec = {
    id: values.id,
    key: values.key,
    cwd: values.cwd === undefined ? process.cwd() : isAbsolute(values.cwd) ? values.cwd : resolve(values.cwd),
    env,
    timeoutSeconds: values.timeout === undefined ? undefined : seconds("--timeout", values.timeout),
    memoryMaxBytes: values["memory-max"] === undefined ? undefined : number("--memory-max", values["memory-max"]),
    maxOutputBytes: values["max-output"] === undefined ? undefined : number("--max-output", values["max-output"]),
    pty,
    ...(values.shell !== undefined ? { shell: values.shell, shellPath: values["shell-path"] } : { argv: positionals }),
  };
  const record = await reachStorage(supervisorOptions(values), {
    direct: (sup) => sup.run(spec),
    viaHolder: { op: "run", args: spec, result: (r) => r as TaskRecord },
    creates: true,
  }, lockWaitMs(values));
  console.log(values.json ? JSON.stringify(taskSummary(record)) : record.id);
  return 0;
}
