import { statSync } from "node:fs";
import { describeValue, OutliveError } from "../errors.ts";
import type { TaskCommand, TaskOrigin } from "../store/record/record.ts";
import { shellPathProblem } from "../spawn/shell-path.ts";
import { checkTaskId } from "../store/record/task-id.ts";
import { checkPtySize, type PtySize } from "../pty/size.ts";
import { MIN_OUTPUT_BYTES } from "../output/trim-loop.ts";
import { checkLimits } from "../limits/limits.ts";
import { checkReadySpec, type ReadyFields, type ReadySpec } from "../ready/ready-spec.ts";
import { type EnvFile, readEnvFile } from "./env-file.ts";
import { checkRestartPolicy, type RestartFields, type RestartPolicy } from "./restart-policy.ts";
import { specDigest } from "./spec-digest.ts";

export interface CheckedRunSpec {
  id: string | null;
  command: TaskCommand;
  cwd: string;
  env: Record<string, string>;
  timeoutSeconds: number | null;
  memoryMaxBytes: number | null;
  key: string | null;
  pty: PtySize | null;
  /** Null: the supervisor's default. */
  maxOutputBytes: number | null;
  /** Set by the supervisor from its `origin` option, never by the caller. */
  origin?: TaskOrigin;
  // ---- Kept after its end (durable MCP tasks): absent unless the caller gave them. ----
  keepAfterEndMs?: number;
  mcpTask?: true;
  /** When the task counts as ready; null for no condition. */
  ready: ReadySpec | null;
  /** `run` resolves once the task is ready (or fails with E_NOT_READY). */
  waitReady: boolean;
  /** Under `key`: a live task of the same spec is kept and returned instead of replaced. */
  ensure: boolean;
  restart: RestartPolicy | null;
  cpuCores: number | null;
  pidsMax: number | null;
  /** The env file read at the door; its values are passed to the task (under `env`), never stored. */
  envFile: EnvFile | null;
  /** The digest of this spec (see specDigest), kept in the record for `ensure`. */
  specDigest: string;
}

/** Checks what `run` was given, naming the field and the value on any problem. */
export function checkRunSpec(spec: RunSpec, limits: { ceilingSeconds: number; shellPath?: string }): CheckedRunSpec {
  const bad = (name: string, expected: string, value: unknown) =>
    new OutliveError("E_BAD_OPTION", `Expected \`${name}\` to be ${expected}, got ${describeValue(value)}`);
  if (typeof spec !== "object" || spec === null) throw bad("run(spec)", "an object", spec);
  const hasArgv = spec.argv !== undefined;
  const hasShell = spec.shell !== undefined;
  if (hasArgv === hasShell) throw bad("argv / shell", "exactly one of them", { argv: spec.argv, shell: spec.shell });
  let command: TaskCommand;
  if (hasArgv) {
    const argv = spec.argv;
    if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === "string") || argv[0] === "") {
      throw bad("argv", "a non-empty array of strings with a non-empty program", argv);
    }
    if (argv.some((a) => a.includes("\0"))) throw bad("argv", "strings without NUL bytes", argv);
    if (spec.shellPath !== undefined) throw bad("shellPath", "absent for an argv task (no shell runs it)", spec.shellPath);
    command = { argv: [...argv] };
  } else {
    if (spec.shellPath !== undefined && typeof spec.shellPath !== "string") throw bad("shellPath", "an absolute path to an executable shell", spec.shellPath);
    if (typeof spec.shell !== "string" || spec.shell.trim() === "" || spec.shell.includes("\0")) {
      throw bad("shell", "a non-empty command string without NUL bytes", spec.shell);
    }
    const shellPath = spec.shellPath ?? limits.shellPath ?? "/bin/sh";
    const problem = typeof shellPath === "string" ? shellPathProblem(shellPath) : "not a string";
    if (problem) throw bad("shellPath", `an absolute path to an executable shell (${problem})`, shellPath);
    command = { shell: spec.shell, shellPath };
  }
  const timeout = spec.timeoutSeconds ?? null;
  if (timeout !== null && (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout <= 0 || timeout > limits.ceilingSeconds)) {
    throw bad("timeoutSeconds", `a number of seconds > 0 and <= the ceiling (${limits.ceilingSeconds})`, timeout);
  }
  const memory = spec.memoryMaxBytes ?? null;
  if (memory !== null && (!Number.isSafeInteger(memory) || memory < 4096)) {
    throw bad("memoryMaxBytes", "an integer number of bytes >= 4096", memory);
  }
  const cwd = spec.cwd ?? process.cwd();
  if (typeof cwd !== "string" || !cwd.startsWith("/") || cwd.includes("\0")) throw bad("cwd", "an absolute path", cwd);
  if (!isDirectory(cwd)) throw bad("cwd", "an existing directory", cwd);
  const env = spec.env ?? {};
  if (typeof env !== "object" || env === null || Array.isArray(env)) throw bad("env", "an object of strings", env);
  for (const [name, value] of Object.entries(env)) {
    if (name === "" || name.includes("=") || name.includes("\0")) throw bad("env", "an object whose names are non-empty and hold no '=' or NUL", name);
    if (typeof value !== "string" || value.includes("\0")) {
      throw bad("env", `an object of strings without NUL bytes (at ${JSON.stringify(name)})`, value);
    }
  }
  const key = spec.key ?? null;
  if (key !== null && (typeof key !== "string" || key === "" || key.length > 200)) {
    throw bad("key", "a non-empty string of at most 200 characters", key);
  }
  const ready = checkReadySpec(spec, bad);
  const flag = (name: "waitReady" | "ensure") => {
    const v = spec[name];
    if (v !== undefined && typeof v !== "boolean") throw bad(name, "true or false", v);
    return v === true;
  };
  const waitReady = flag("waitReady");
  if (waitReady && !ready) throw bad("waitReady", "given with readyLog, readyPort or readyHttp (there is nothing to wait for)", spec.waitReady);
  const ensure = flag("ensure");
  if (ensure && key === null) throw bad("ensure", "given with a key (a task is ensured under its key)", spec.ensure);
  const restart = checkRestartPolicy(spec, bad);
  const limits2 = checkLimits(spec, bad);
  const envFile = checkEnvFile(spec.envFile, bad);
  const pty = spec.pty === undefined ? null : checkPtySize(spec.pty);
  return {
    id: spec.id === undefined ? null : checkTaskId(spec.id),
    command,
    cwd,
    env,
    timeoutSeconds: timeout,
    memoryMaxBytes: memory,
    key,
    pty,
    maxOutputBytes: spec.maxOutputBytes === undefined
      ? null
      : outputBound(spec.maxOutputBytes, 0, (v) => bad("maxOutputBytes", `0 or an integer >= ${MIN_OUTPUT_BYTES}`, v)),
    ...keptAfterEnd(spec, bad),
    ready,
    waitReady,
    ensure,
    restart,
    ...limits2,
    envFile,
    specDigest: specDigest({ command, cwd, env, envFileDigest: envFile?.digest ?? null, timeoutSeconds: timeout, memoryMaxBytes: memory, ...limits2, pty, ready, restart }),
  };
}

/** The durable-MCP-task fields of a run spec, checked; only those given are returned. */
function keptAfterEnd(spec: RunSpec, bad: (name: string, expected: string, value: unknown) => Error): Pick<CheckedRunSpec, "keepAfterEndMs" | "mcpTask"> {
  const keep = spec.keepAfterEndMs;
  if (keep !== undefined && (!Number.isSafeInteger(keep) || keep <= 0)) throw bad("keepAfterEndMs", "a whole number of milliseconds > 0", keep);
  if (spec.mcpTask !== undefined && typeof spec.mcpTask !== "boolean") throw bad("mcpTask", "true or false", spec.mcpTask);
  return { ...(keep === undefined ? {} : { keepAfterEndMs: keep }), ...(spec.mcpTask ? { mcpTask: true as const } : {}) };
}

/** The env file, read and parsed at the door: unreadable or malformed, and nothing is stored. */
function checkEnvFile(path: unknown, bad: (name: string, expected: string, value: unknown) => Error): EnvFile | null {
  if (path === undefined) return null;
  if (typeof path !== "string" || !path.startsWith("/") || path.includes("\0")) throw bad("envFile", "an absolute path to a dotenv file", path);
  try {
    return readEnvFile(path);
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    throw bad("envFile", `a readable dotenv file (${e.code ? `${e.code}: cannot read it` : e.message})`, path);
  }
}

/** The variables a task gets on top of its starter's environment: the env file's, then `env`'s, which win. */
export function taskEnv(spec: Pick<CheckedRunSpec, "env" | "envFile">): Record<string, string> {
  return { ...(spec.envFile?.values ?? {}), ...spec.env };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** What `run` takes. */
export interface RunSpec extends ReadyFields, RestartFields {
  /** Task id; generated (`t-` + 16 hex) when absent. Must match `^[a-z0-9][a-z0-9-]{0,62}$`. */
  id?: string;
  /** The command as an argv: no shell is involved, arguments arrive byte for byte. */
  argv?: string[];
  /** Or a shell string, run by `shellPath -c` (the supervisor's `shellPath` unless given here). */
  shell?: string;
  /** The shell for this task's `shell` string; checked like the supervisor's `shellPath` option. */
  shellPath?: string;
  cwd?: string;
  env?: Record<string, string>;
  /** Seconds; when they pass the task is killed and ends `timed_out`. */
  timeoutSeconds?: number;
  /** Bytes of memory the task may use (cgroup placements only). */
  memoryMaxBytes?: number;
  /** Bytes of output kept on disk per stream (0: all). Default: the supervisor's `maxOutputBytes` (32 MiB). */
  maxOutputBytes?: number;
  /** One task per key: running under a key with a live task supersedes it. */
  key?: string;
  /** Run the command on a real terminal of this size (default 80 x 24), held inside the task's placement. */
  pty?: { cols?: number; rows?: number };
  // ---- Kept after its end (durable MCP tasks). ----
  /** Keep the task at least this many ms after its end: retention never removes it earlier, even acknowledged (an MCP task's TTL). */
  keepAfterEndMs?: number;
  /** Mark it an MCP task: its id is a handle that `outlive mcp`'s `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` resolve. */
  mcpTask?: boolean;
  /** `run` resolves once the task is ready (see readyLog, readyPort, readyHttp), or rejects with E_NOT_READY when it ends first or readyTimeoutSeconds pass; the task runs on. */
  waitReady?: boolean;
  /** With `key`: a live task under the key whose spec is the same (see specDigest) is returned, marked kept, instead of replaced. */
  ensure?: boolean;
  /** Cores the task may use, e.g. 0.5 (cgroup placements with the cpu controller). */
  cpuCores?: number;
  /** Processes and threads the task may have at once; a fork over it fails with EAGAIN (cgroup placements with the pids controller). */
  pidsMax?: number;
  /** An absolute path to a dotenv file whose variables the task gets (`env` wins over it); read once, at `run`, and never stored. */
  envFile?: string;
}

/** An output bound: 0 (keep all) or at least one block, the unit holes are punched in. */
export function outputBound(value: unknown, dflt: number, bad: (v: unknown) => Error): number {
  const v = value ?? dflt;
  if (!Number.isSafeInteger(v) || ((v as number) !== 0 && (v as number) < MIN_OUTPUT_BYTES)) throw bad(v);
  return v as number;
}
