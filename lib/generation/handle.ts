/**
 * The seam between the generation table and whatever actually runs: a
 * node:child_process child today, the supervisor's own tasks later. The
 * table never asks which one it holds.
 */

/**
 * A signal name ("SIGTERM") or number, as `kill(2)` takes it.
 *
 * @example
 * ```ts
 * import type { KillSignal } from "./handle.ts";
 * const signals: KillSignal[] = ["SIGTERM", 9];
 * console.log(signals.length); // 2
 * ```
 */
export type KillSignal = string | number;

/**
 * Which pipe an output chunk came from.
 *
 * @example
 * ```ts
 * import type { OutputStream } from "./handle.ts";
 * const stream: OutputStream = "stderr";
 * console.log(stream); // "stderr"
 * ```
 */
export type OutputStream = "stdout" | "stderr";

/**
 * Where a running thing reports what happens to it. The table hands each
 * generation its own sink, bound to that (key, generation), so an adapter
 * never has to know or check identity itself.
 *
 * `exit`, `close` and `error` all end the generation; the first one to
 * arrive settles it and the rest are ignored. `fault` does not end it.
 *
 * @example
 * ```ts
 * import { GenerationTable, type ProcessSink } from "./mod.ts";
 * let sink: ProcessSink | undefined;
 * const table = new GenerationTable<null>({ start: (_spec, s) => ((sink = s), { pid: null, kill: () => true }) });
 * table.on("exit", (e) => console.log("exit", e.generation, e.code)); // "exit 1 0", once
 * table.spawn("k", null);
 * sink!.exit(0, null);
 * sink!.close(0, null); // ignored: generation 1 has settled
 * ```
 */
export interface ProcessSink {
  output(stream: OutputStream, data: string | Uint8Array): void;
  /** The process ended. Output may still be draining, so adapters that can should prefer `close`. */
  exit(code: number | null, signal: string | null): void;
  /** The process ended and its output is fully drained. */
  close(code: number | null, signal: string | null): void;
  /** The process failed and is not running (e.g. it could not be spawned). */
  error(error: Error): void;
  /** Something went wrong that did not end the process (e.g. a kill was refused). */
  fault(error: Error): void;
}

/**
 * A started thing the table can signal.
 *
 * @example
 * ```ts
 * import type { ProcessHandle } from "./handle.ts";
 * const handle: ProcessHandle = { pid: null, kill: (signal) => (console.log("got", signal), true) };
 * handle.kill("SIGTERM"); // "got SIGTERM"
 * ```
 */
export interface ProcessHandle {
  /** The OS pid when there is one; null when spawning failed or the thing has none. */
  readonly pid: number | null;
  /** Sends a signal; false when it could not be delivered (already gone, refused). */
  kill(signal: KillSignal): boolean;
}

/**
 * Starts one generation. `start` should not call the sink synchronously
 * (node's children never do); the table copes if it does, but a kill asked
 * for before `start` returns is only delivered once it has.
 *
 * @example
 * ```ts
 * import { GenerationTable, type ProcessSource } from "./mod.ts";
 * // Wrapping something that is not a child process: a timer that "runs" for `ms`.
 * const timers: ProcessSource<{ ms: number }> = {
 *   start(spec, sink) {
 *     const t = setTimeout(() => sink.close(0, null), spec.ms);
 *     return { pid: null, kill: (signal) => (clearTimeout(t), sink.close(null, String(signal)), true) };
 *   },
 * };
 * const table = new GenerationTable(timers);
 * table.on("exit", (e) => console.log(e.generation, e.code)); // "2 0"
 * table.on("retired", (e) => console.log(e.generation, "retired by", e.by)); // "1 retired by 2"
 * table.spawn("t", { ms: 1000 });
 * table.spawn("t", { ms: 10 });
 * ```
 */
export interface ProcessSource<Spec> {
  start(spec: Spec, sink: ProcessSink): ProcessHandle;
}
