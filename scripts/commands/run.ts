import { isAbsolute, resolve } from "node:path";
import type { RunSpec, TaskRecord } from "../../lib/mod.ts";
import { OutliveError } from "../../lib/errors.ts";
import { checkRunSpec } from "../../lib/start/run-spec.ts";
import { help, number, parseFlags, seconds } from "../cli/flags.ts";
import { lockWaitMs, SUPERVISOR_FLAGS, SUPERVISOR_FLAGS_HELP, supervisorOptions } from "../cli/supervisor-flags.ts";
import { reachStorage } from "../cli/reach.ts";
import { taskSummary } from "../cli/task-table.ts";
import { UsageError } from "../cli/usage-error.ts";

export const RUN_HELP = `usage: outlive run [--id ID] [--cwd DIR] [--env NAME=VALUE]… [--env-file FILE] [--key KEY [--ensure]] [--timeout DURATION]
                  [--memory-max BYTES] [--cpu CORES] [--pids N] [--max-output BYTES]
                  [--ready-log REGEX] [--ready-port PORT] [--ready-http URL] [--ready-timeout DURATION] [--wait-ready]
                  [--restart on-failure|always [--restart-max N] [--restart-delay DURATION] [--restart-delay-max DURATION]]
                  [--pty [--cols C --rows R]] [--shell STRING [--shell-path PATH] | -- CMD ARG…]

Starts a task and prints its id once it runs. The task outlives this command. When a
supervisor holds the storage, it starts the task (through its control channel), with
its own environment plus --env.
  --id ID            task id (default: generated, t-<16 hex>)
  --cwd DIR          directory the task runs in (default: this one)
  --env NAME=VALUE   set a variable for the task (repeatable; default: this environment only)
  --env-file FILE    set the variables of a dotenv file (NAME=value lines); --env wins over it. The values
                     are read once, here, and never stored or put on a command line
  --key KEY          one task per key: a live task under KEY is superseded (killed) (default: none)
  --ensure           with --key: a live task under KEY started with the same spec (command, cwd, env values,
                     env file, limits, readiness, restart) is kept and its id printed; another is replaced
  --timeout DURATION end the task as timed_out after this long: 90s, 15m, 2h, or seconds (default: the 24 h ceiling)
  --memory-max BYTES cap its memory (cgroup placements only)
  --cpu CORES        limit its CPU, e.g. 0.5 for half a core (cgroup placements with the cpu controller)
  --pids N           limit its processes and threads; a fork over N fails, nothing is killed (cgroup placements)
  --max-output BYTES keep at most this much of stdout and of stderr on disk, dropping the oldest (0: all; default 33554432, 32 MiB)
  --ready-log REGEX  the task is ready once a line of its output matches REGEX (a JavaScript regular expression)
  --ready-port PORT  … once one of its own processes listens on TCP PORT
  --ready-http URL   … once URL answers a GET with 2xx or 3xx
  --ready-timeout DURATION  how long --wait-ready waits (default 60s); the task runs on after it
  --wait-ready       print the id once the task is ready; exit 1 with its state, reason and last output when
                     it ends first or the ready timeout passes
  --restart on-failure|always  start the command again after it fails (on-failure) or after any end (always);
                     carried out by the task's outlive-shim, with no supervisor needed
  --restart-max N    restart at most N times (default 5)
  --restart-delay DURATION  wait this long before the first restart, doubling each time (default 1s; 500ms, 2s, …)
  --restart-delay-max DURATION  the longest wait between restarts (default 30s)
  --shell STRING     run STRING with a shell (-c) instead of an argv
  --shell-path PATH  the shell for --shell (default: bash where installed, else /bin/sh)
  --pty              run it on a terminal held inside its placement (see send, resize, attach)
  --cols C, --rows R that terminal's size (default 80 x 24)
${SUPERVISOR_FLAGS_HELP}
An argv command's program is looked up first (the task's PATH and cwd); when it cannot
run, nothing is started or stored and run exits 127 (not found) or 126 (not executable).`;

/** The run spec's field for each flag, so a refusal names the flag a person typed. */
const FLAG_OF: Record<string, string> = {
  readyLog: "--ready-log", readyPort: "--ready-port", readyHttp: "--ready-http", readyTimeoutSeconds: "--ready-timeout",
  waitReady: "--wait-ready", ensure: "--ensure", restart: "--restart", restartMax: "--restart-max",
  restartDelaySeconds: "--restart-delay", restartDelayMaxSeconds: "--restart-delay-max", cpuCores: "--cpu", pidsMax: "--pids",
  envFile: "--env-file", memoryMaxBytes: "--memory-max", maxOutputBytes: "--max-output", timeoutSeconds: "--timeout", key: "--key", cwd: "--cwd", shellPath: "--shell-path",
};

export async function runCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    ...SUPERVISOR_FLAGS,
    id: { type: "string" },
    cwd: { type: "string" },
    env: { type: "string", multiple: true },
    "env-file": { type: "string" },
    timeout: { type: "string" },
    "memory-max": { type: "string" },
    cpu: { type: "string" },
    pids: { type: "string" },
    "max-output": { type: "string" },
    key: { type: "string" },
    ensure: { type: "boolean" },
    "ready-log": { type: "string" },
    "ready-port": { type: "string" },
    "ready-http": { type: "string" },
    "ready-timeout": { type: "string" },
    "wait-ready": { type: "boolean" },
    restart: { type: "string" },
    "restart-max": { type: "string" },
    "restart-delay": { type: "string" },
    "restart-delay-max": { type: "string" },
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
  const num = (flag: string) => (values[flag as keyof typeof values] === undefined ? undefined : number(`--${flag}`, values[flag as keyof typeof values] as string));
  const dur = (flag: string) => (values[flag as keyof typeof values] === undefined ? undefined : seconds(`--${flag}`, values[flag as keyof typeof values] as string));
  const path = (p: string | undefined) => (p === undefined ? undefined : isAbsolute(p) ? p : resolve(p));
  const spec: RunSpec = {
    id: values.id,
    key: values.key,
    cwd: path(values.cwd) ?? process.cwd(),
    env,
    envFile: path(values["env-file"]),
    timeoutSeconds: dur("timeout"),
    memoryMaxBytes: num("memory-max"),
    cpuCores: num("cpu"),
    pidsMax: num("pids"),
    maxOutputBytes: num("max-output"),
    pty,
    ...(values.ensure ? { ensure: true } : {}),
    readyLog: values["ready-log"],
    readyPort: num("ready-port"),
    readyHttp: values["ready-http"],
    readyTimeoutSeconds: dur("ready-timeout"),
    ...(values["wait-ready"] ? { waitReady: true } : {}),
    restart: values.restart as RunSpec["restart"],
    restartMax: num("restart-max"),
    restartDelaySeconds: dur("restart-delay"),
    restartDelayMaxSeconds: dur("restart-delay-max"),
    ...(values.shell !== undefined ? { shell: values.shell, shellPath: values["shell-path"] } : { argv: positionals }),
  };
  // Only what was given travels: the wire refuses a param it does not know, and an absent one is the default.
  const given = Object.fromEntries(Object.entries(spec).filter(([, v]) => v !== undefined)) as RunSpec;
  let record: TaskRecord & { ensured?: { outcome: string; replaced: string | null; differs: string[] } };
  try {
    // The spec's shapes are checked before the storage is reached, which makes it when it is missing: a refused
    // command leaves nothing behind. The timeout's ceiling and the default shell are the opened supervisor's
    // (or the holder's), so they are checked there; here only what holds under any supervisor.
    checkRunSpec(given, { ceilingSeconds: Number.POSITIVE_INFINITY, shellPath: "/bin/sh" });
    record = await reachStorage(supervisorOptions(values), {
      direct: (sup) => sup.run(given),
      viaHolder: { op: "run", args: given as Record<string, unknown>, result: (r) => r as TaskRecord },
      creates: true,
    }, lockWaitMs(values));
  } catch (error) {
    throw flagNamed(error);
  }
  const ensured = record.ensured;
  if (ensured && !values.json) {
    if (ensured.outcome === "kept") console.error(`outlive run: kept ${record.id}: it runs under key ${JSON.stringify(record.key)} with the same spec`);
    if (ensured.outcome === "replaced") console.error(`outlive run: replaced ${ensured.replaced} under key ${JSON.stringify(record.key)}: its ${ensured.differs.join(", ")} differed`);
  }
  console.log(values.json ? JSON.stringify({ ...taskSummary(record), ...(ensured ? { ensured } : {}) }) : record.id);
  return 0;
}

/** A refusal of a spec field, said with the flag that set it (`--ready-port`), as a person typed it. */
function flagNamed(error: unknown): unknown {
  const e = error as OutliveError;
  if (e?.code !== "E_BAD_OPTION" || typeof e.message !== "string") return error;
  const message = e.message.replace(/`([A-Za-z]+)`/g, (whole, name: string) => FLAG_OF[name] ?? whole);
  return message === e.message ? error : new OutliveError("E_BAD_OPTION", message);
}
