/**
 * The seam between the generation table and whatever actually runs: a
 * node:child_process child today, the supervisor's own tasks later. The
 * table never asks which one it holds.
 */

/** A signal name ("SIGTERM") or number, as `kill(2)` takes it. */
export type KillSignal = string | number;

export type OutputStream = "stdout" | "stderr";

/**
 * Where a running thing reports what happens to it. The table hands each
 * generation its own sink, bound to that (key, generation), so an adapter
 * never has to know or check identity itself.
 *
 * `exit`, `close` and `error` all end the generation; the first one to
 * arrive settles it and the rest are ignored. `fault` does not end it.
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

/** A started thing the table can signal. */
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
 */
export interface ProcessSource<Spec> {
  start(spec: Spec, sink: ProcessSink): ProcessHandle;
}
