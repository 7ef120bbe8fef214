import { spawn } from "node:child_process";
import { GenerationError } from "./errors.ts";
import type { ProcessSource } from "./handle.ts";

/**
 * What to run: an argv, no shell involved unless you name one.
 *
 * @example
 * ```ts
 * import type { ChildProcessSpec } from "./child-process.ts";
 * const spec: ChildProcessSpec = { command: "sh", args: ["-c", "echo $GREETING"], env: { GREETING: "hi" } };
 * console.log(spec.command); // "sh"
 * ```
 */
export interface ChildProcessSpec {
  command: string;
  args?: readonly string[];
  cwd?: string;
  env?: Record<string, string | undefined>;
}

/**
 * Options of `childProcessSource`, each with its default.
 *
 * @example
 * ```ts
 * import { childProcessSource, type ChildProcessSourceOptions } from "./child-process.ts";
 * const options: ChildProcessSourceOptions = { drainMs: 250, encoding: null };
 * console.log(typeof childProcessSource(options).start); // "function"
 * ```
 */
export interface ChildProcessSourceOptions {
  /**
   * After the child has exited, how long to wait for its stdout and stderr
   * to drain (node's `close`) before settling anyway. Default 2000 ms.
   * Settling on `close` keeps the last output of the owner; the bound stops
   * a grandchild that inherited the pipes from holding the key forever.
   */
  drainMs?: number;
  /** `"utf8"` (default) delivers strings cut at character boundaries; `null` delivers raw bytes. */
  encoding?: "utf8" | null;
}

/**
 * A process source for `GenerationTable` backed by node:child_process
 * `spawn`. stdin is closed; stdout and stderr are piped to the table.
 *
 * @example
 * ```ts
 * import { GenerationTable, childProcessSource } from "./mod.ts";
 * const table = new GenerationTable(childProcessSource({ drainMs: 500 }));
 * table.on("exit", (e) => console.log(e.code)); // 3
 * table.spawn("job", { command: "sh", args: ["-c", "exit 3"] });
 * ```
 */
export function childProcessSource(options: ChildProcessSourceOptions = {}): ProcessSource<ChildProcessSpec> {
  const drainMs = options.drainMs ?? 2000;
  if (!Number.isInteger(drainMs) || drainMs < 0) {
    throw new GenerationError("INVALID_OPTION", `Expected the \`drainMs\` option to be a non-negative integer, got \`${String(drainMs)}\` (${typeof drainMs})`);
  }
  const encoding = options.encoding === undefined ? "utf8" : options.encoding;
  if (encoding !== "utf8" && encoding !== null) {
    throw new GenerationError("INVALID_OPTION", `Expected the \`encoding\` option to be "utf8" or null, got \`${String(encoding)}\` (${typeof encoding})`);
  }

  return {
    start(spec, sink) {
      const child = spawn(spec.command, spec.args ?? [], {
        cwd: spec.cwd,
        env: spec.env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      if (encoding !== null) {
        child.stdout.setEncoding(encoding);
        child.stderr.setEncoding(encoding);
      }
      child.stdout.on("data", (data: string | Uint8Array) => sink.output("stdout", data));
      child.stderr.on("data", (data: string | Uint8Array) => sink.output("stderr", data));

      let drain: ReturnType<typeof setTimeout> | undefined;
      child.on("exit", (code, signal) => {
        drain = setTimeout(() => sink.exit(code, signal), drainMs);
        // The pipes keep the loop alive while they are open; the timer alone must not.
        drain.unref?.();
      });
      child.on("close", (code, signal) => {
        clearTimeout(drain);
        sink.close(code, signal);
      });
      // Node emits `error` both when the spawn failed (no pid: the child never
      // ran, so it ends the generation) and when a kill was refused (it did
      // not end anything).
      child.on("error", (error) => (child.pid === undefined ? sink.error(error) : sink.fault(error)));

      return {
        pid: child.pid ?? null,
        kill: (signal) => child.kill(signal as NodeJS.Signals | number),
      };
    },
  };
}
