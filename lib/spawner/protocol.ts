import { isAbsolute } from "node:path";
import { RPC_ERRORS, RpcError } from "../rpc/protocol.ts";
import type { SpawnFiles } from "../spawn/spawn-task.ts";
import { TASK_ID_PATTERN } from "../store/record/task-id.ts";

/**
 * The spawner's channel: JSON-RPC 2.0, one message a line (lib/rpc's
 * endpoint), on a unix socket that only its owner can reach.
 *
 * - `hello` → `{ pid, startTime, version }`: who answers, for the identity check;
 * - `spawn` SpawnRequest → SpawnAnswer: makes the task's files and forks its argv;
 * - `settle` `{ id, waitMs }` → SettleAnswer: what became of the request
 *   for task `id`, once it is no longer under way (or `waitMs` passed);
 * - `exit` → `{}`: ends the spawner once no spawn is under way.
 *
 * @example
 * ```ts
 * import { SPAWNER_METHODS } from "./protocol.ts";
 * console.log(SPAWNER_METHODS.join(" ")); // "hello spawn settle exit"
 * ```
 */
export const SPAWNER_METHODS = ["hello", "spawn", "settle", "exit"] as const;

/** Longest request line the spawner takes: an argv and environment beyond this could not be exec'd anyway (ARG_MAX). */
export const SPAWNER_MAX_LINE_BYTES = 4 * 1024 * 1024;

/**
 * The channel's revision, which `hello` tells: 2 added a spawn's `stdin`
 * (outlive-shim's settings) and `argv0`. A spawner that answers another
 * (one of the previous release, still running after an upgrade) is ended
 * and replaced before a spawn is handed to it: it would drop the shim's
 * settings, and the shim would refuse to run.
 */
export const SPAWNER_PROTOCOL = 2;

/** One task to fork: everything it runs with comes in the request, nothing from the spawner's own process. */
export interface SpawnRequest {
  /** The task's id: what `settle` asks by. */
  id: string;
  /** The full argv (placement prefix and wrapper). */
  argv: string[];
  cwd: string;
  /** The whole environment the task gets (the spawner's own is never mixed in). */
  env: Record<string, string>;
  files: SpawnFiles;
  /** What the process reads on stdin (the shim's settings), base64; absent for /dev/null. */
  stdin?: string;
  /** The process's argv[0] where it differs from argv[0]'s path (the shim's name). */
  argv0?: string;
}

export interface SpawnAnswer {
  pid: number;
  /** Wall-clock ms around the fork (see SpawnedTask.startedWithin). */
  startedWithin: { after: number; before: number };
}

/** What the spawner knows of one task id's request. */
export type SettleAnswer =
  | { state: "unknown" }
  | { state: "pending" }
  | { state: "spawned"; pid: number; startTime: string | null }
  | { state: "failed"; error: string };

export interface HelloAnswer {
  pid: number;
  startTime: string;
  version: string;
  /** SPAWNER_PROTOCOL of the spawner's release; absent before revision 2. */
  protocol?: number;
}

const bad = (param: string, message: string) => new RpcError(RPC_ERRORS.invalidParams, `spawn: ${message}`, { code: "E_BAD_SPAWN_REQUEST", param });

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function checkPath(value: unknown, param: string): string {
  if (typeof value !== "string" || !isAbsolute(value) || value.includes("\0")) {
    throw bad(param, `${param} must be an absolute path without NUL bytes, not ${JSON.stringify(value)}`);
  }
  return value;
}

/**
 * Checks a `spawn` request's params and returns them typed; an RpcError
 * (-32602) naming the field and what was expected otherwise. Pure.
 *
 * @example
 * ```ts
 * import { checkSpawnRequest } from "./protocol.ts";
 * const files = { stdout: "/s/o", stderr: "/s/e", exit: "/s/x", timedOutReserve: "/s/r" };
 * console.log(checkSpawnRequest({ id: "t-1", argv: ["true"], cwd: "/", env: {}, files }).argv); // ["true"]
 * try { checkSpawnRequest({ id: "t-1", argv: [], cwd: "/", env: {}, files }); } catch (e) { console.log((e as Error).message); }
 * // "spawn: argv must be a non-empty array of strings without NUL bytes"
 * ```
 */
export function checkSpawnRequest(params: unknown): SpawnRequest {
  if (!isRecord(params)) throw bad("params", `params must be an object { id, argv, cwd, env, files }, not ${JSON.stringify(params)}`);
  const { id, argv, cwd, env, files } = params;
  if (typeof id !== "string" || !TASK_ID_PATTERN.test(id)) throw bad("id", `id must be a task id (${TASK_ID_PATTERN}), not ${JSON.stringify(id)}`);
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === "string" && !a.includes("\0"))) {
    throw bad("argv", "argv must be a non-empty array of strings without NUL bytes");
  }
  checkPath(cwd, "cwd");
  if (!isRecord(env)) throw bad("env", "env must be an object of strings");
  for (const [k, v] of Object.entries(env)) {
    if (typeof v !== "string" || k === "" || k.includes("=") || k.includes("\0") || v.includes("\0")) {
      throw bad("env", `env.${k} must be a string, under a name without "=" or NUL bytes`);
    }
  }
  if (!isRecord(files)) throw bad("files", "files must be an object { stdout, stderr, exit, timedOutReserve }");
  const checked: SpawnFiles = {
    stdout: checkPath(files.stdout, "files.stdout"),
    stderr: checkPath(files.stderr, "files.stderr"),
    exit: checkPath(files.exit, "files.exit"),
    timedOutReserve: checkPath(files.timedOutReserve, "files.timedOutReserve"),
  };
  const { stdin, argv0 } = params;
  if (stdin !== undefined && (typeof stdin !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(stdin) || stdin.length % 4 !== 0)) {
    throw bad("stdin", "stdin must be a base64 string");
  }
  if (argv0 !== undefined && (typeof argv0 !== "string" || argv0 === "" || argv0.includes("\0"))) {
    throw bad("argv0", "argv0 must be a non-empty string without NUL bytes");
  }
  return {
    id,
    argv: argv as string[],
    cwd: cwd as string,
    env: env as Record<string, string>,
    files: checked,
    ...(stdin !== undefined ? { stdin: stdin as string } : {}),
    ...(argv0 !== undefined ? { argv0: argv0 as string } : {}),
  };
}

/**
 * Checks a `settle` request's params; an RpcError (-32602) naming the field otherwise. Pure.
 *
 * @example
 * ```ts
 * import { checkSettleRequest } from "./protocol.ts";
 * console.log(checkSettleRequest({ id: "t-1" })); // { id: "t-1", waitMs: 0 }
 * ```
 */
export function checkSettleRequest(params: unknown): { id: string; waitMs: number } {
  if (!isRecord(params)) throw new RpcError(RPC_ERRORS.invalidParams, "settle: params must be an object { id, waitMs }", { code: "E_BAD_SPAWN_REQUEST", param: "params" });
  const { id, waitMs } = params;
  if (typeof id !== "string" || !TASK_ID_PATTERN.test(id)) {
    throw new RpcError(RPC_ERRORS.invalidParams, `settle: id must be a task id, not ${JSON.stringify(id)}`, { code: "E_BAD_SPAWN_REQUEST", param: "id" });
  }
  if (waitMs !== undefined && (typeof waitMs !== "number" || !Number.isInteger(waitMs) || waitMs < 0 || waitMs > 600_000)) {
    throw new RpcError(RPC_ERRORS.invalidParams, `settle: waitMs must be a whole number of ms from 0 to 600000, not ${JSON.stringify(waitMs)}`, { code: "E_BAD_SPAWN_REQUEST", param: "waitMs" });
  }
  return { id, waitMs: (waitMs as number | undefined) ?? 0 };
}
