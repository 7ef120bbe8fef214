/**
 * Any command as the daemon's module: a supervisor of the user's own, in
 * any language. The harness starts it in the module cgroup, inside the
 * container, as the user, and needs two things from it: how to tell it is
 * up, and how to tell it to drain.
 *
 * @example
 * ```ts
 * import { defineScenario, type ForeignModuleSpec } from "outlive/harness";
 * const mine: ForeignModuleSpec = {
 *   argv: ["bash", "-c", 'echo listening; while read -r l; do [ "$l" = "drain restart" ] && exit 0; done'],
 *   ready: { stdout: "listening" },
 *   drain: { stdin: "drain {reason}", waitMs: 3000 },
 * };
 * export default defineScenario({
 *   name: "mine-restarts",
 *   summary: "my supervisor drains on a restart and comes back",
 *   async inside(ctx) {
 *     const d = ctx.daemon({ module: mine });
 *     const first = await d.start();
 *     const second = await d.restart("restart");
 *     ctx.check("a new process after the restart", first.pid !== second.pid && ctx.alive(second.pid));
 *     await d.killModule();
 *   },
 * });
 * ```
 */
export interface ForeignModuleSpec {
  /** The command; argv[0] is looked up on PATH. */
  argv: string[];
  /** Its working directory. Default: the driver's. */
  cwd?: string;
  /** Added to the driver's environment. */
  env?: Record<string, string>;
  /**
   * How the harness knows it is up: a line on its stdout matching
   * `stdout`, a `file` made or touched after it was spawned (one left by
   * the previous incarnation does not count), a unix `socket` that accepts
   * a connection, or `none` (up once spawned). Default `{ none: true }`.
   */
  ready?: { stdout: string | RegExp } | { file: string } | { socket: string } | { none: true };
  /**
   * Bound on the wait for ready. Default 60 000 ms: only a module that never comes up meets it, and a busy
   * machine (a CI runner beside other jobs) took over 20 s to start a shell script's first child in a container.
   */
  readyTimeoutMs?: number;
  /**
   * How the daemon tells it to drain before a restart or stop: a line on its
   * stdin (`{reason}` in it becomes restart, reload, disable…), a signal,
   * or nothing (the daemon goes straight to cgroup.kill). `waitMs` bounds
   * the wait for it to exit (default: the simulator's `drainWaitMs`).
   */
  drain?: ({ stdin: string } | { signal: NodeJS.Signals } | { none: true }) & { waitMs?: number };
}

const READY_KEYS = ["stdout", "file", "socket", "none"];
const DRAIN_KEYS = ["stdin", "signal", "none"];

function fail(option: string, expected: string, value: unknown): never {
  const shown = value instanceof RegExp ? String(value) : JSON.stringify(value);
  throw new Error(`Expected the \`module.${option}\` option to be ${expected}, got \`${shown}\` (${typeof value})`);
}

/** Checks a spec once, at the edge; the inner code trusts it. */
export function checkForeignModule(spec: ForeignModuleSpec): ForeignModuleSpec {
  if (typeof spec !== "object" || spec === null) fail("", "an object", spec);
  if (!Array.isArray(spec.argv) || spec.argv.length === 0 || spec.argv.some((a) => typeof a !== "string") || spec.argv[0] === "") {
    fail("argv", "a non-empty array of strings", spec.argv);
  }
  if (spec.cwd !== undefined && (typeof spec.cwd !== "string" || !spec.cwd.startsWith("/"))) fail("cwd", "an absolute path", spec.cwd);
  if (spec.env !== undefined && (typeof spec.env !== "object" || Object.values(spec.env).some((v) => typeof v !== "string"))) fail("env", "an object of strings", spec.env);
  const ready = spec.ready ?? { none: true };
  if (typeof ready !== "object" || Object.keys(ready).length !== 1 || !READY_KEYS.includes(Object.keys(ready)[0])) {
    fail("ready", "one of { stdout }, { file }, { socket }, { none: true }", ready);
  }
  const drain = spec.drain ?? { none: true };
  const drainKeys = Object.keys(drain).filter((k) => k !== "waitMs");
  if (typeof drain !== "object" || drainKeys.length !== 1 || !DRAIN_KEYS.includes(drainKeys[0])) {
    fail("drain", "one of { stdin }, { signal }, { none: true } (with an optional waitMs)", drain);
  }
  if (drain.waitMs !== undefined && !(Number.isInteger(drain.waitMs) && drain.waitMs > 0)) fail("drain.waitMs", "a positive integer", drain.waitMs);
  if (spec.readyTimeoutMs !== undefined && !(Number.isInteger(spec.readyTimeoutMs) && spec.readyTimeoutMs > 0)) {
    fail("readyTimeoutMs", "a positive integer", spec.readyTimeoutMs);
  }
  return { ...spec, ready, drain };
}
