import type { GenerationError } from "./errors.ts";
import type { KillSignal, OutputStream } from "./handle.ts";

/**
 * Which run under which key: the identity every event carries.
 *
 * @example
 * ```ts
 * import type { GenerationRef } from "./events.ts";
 * const ref: GenerationRef = { key: "tab-1", generation: 3 };
 * console.log(`${ref.key}#${ref.generation}`); // "tab-1#3"
 * ```
 */
export interface GenerationRef {
  readonly key: string;
  /** From a per-table counter that only grows, so it is never reused, not even after the key's record is gone. */
  readonly generation: number;
}

/**
 * Output of the generation that owns the key at the moment of delivery.
 *
 * @example
 * ```ts
 * import { GenerationTable, childProcessSource, type OutputEvent } from "./mod.ts";
 * const table = new GenerationTable(childProcessSource());
 * table.on("output", (e: OutputEvent) => console.log(e.key, e.generation, e.stream, String(e.data))); // "k 1 stdout hi\n"
 * table.spawn("k", { command: "echo", args: ["hi"] });
 * ```
 */
export interface OutputEvent extends GenerationRef {
  readonly pid: number | null;
  readonly stream: OutputStream;
  readonly data: string | Uint8Array;
}

/**
 * The one final event of a generation that still owned its key when it
 * settled. The key is already free when this is emitted, so a listener may
 * spawn under it again at once.
 *
 * @example
 * ```ts
 * import { GenerationTable, childProcessSource, type ExitEvent } from "./mod.ts";
 * const table = new GenerationTable(childProcessSource());
 * table.on("exit", (e: ExitEvent) => console.log(e.generation, e.code, e.signal, e.error?.code)); // "1 4 null undefined"
 * table.spawn("k", { command: "sh", args: ["-c", "exit 4"] });
 * ```
 */
export interface ExitEvent extends GenerationRef {
  readonly pid: number | null;
  readonly code: number | null;
  readonly signal: string | null;
  /** Set when the generation failed rather than exited (it could not be started or spawned). */
  readonly error: GenerationError | null;
  /** The last signal the table sent it (by `kill` or `killAll`), or null. */
  readonly killSignal: KillSignal | null;
}

/**
 * A fault of the owning generation that did not end it (e.g. a kill was refused).
 *
 * @example
 * ```ts
 * import { GenerationTable, type GenerationErrorEvent, type ProcessSink } from "./mod.ts";
 * let sink: ProcessSink | undefined;
 * const table = new GenerationTable<null>({ start: (_s, s) => ((sink = s), { pid: null, kill: () => false }) });
 * table.on("error", (e: GenerationErrorEvent) => console.log(e.generation, e.error.code)); // "1 PROCESS_FAULT"
 * table.spawn("k", null);
 * sink!.fault(new Error("EPERM"));
 * ```
 */
export interface GenerationErrorEvent extends GenerationRef {
  readonly pid: number | null;
  readonly error: GenerationError;
}

/**
 * A spawn under the key took it over from this generation. Emitted once per
 * superseded generation, after the successor was started and the
 * predecessor was signalled. From here on nothing of this generation is
 * delivered as `output`, `exit` or `error`.
 *
 * @example
 * ```ts
 * import { GenerationTable, childProcessSource, type SupersededEvent } from "./mod.ts";
 * const table = new GenerationTable(childProcessSource());
 * table.on("superseded", (e: SupersededEvent) => console.log(`${e.key}#${e.generation}: superseded by generation ${e.by}`));
 * table.spawn("k", { command: "sleep", args: ["5"] });
 * table.spawn("k", { command: "true" }); // "k#1: superseded by generation 2"
 * ```
 */
export interface SupersededEvent extends GenerationRef {
  readonly pid: number | null;
  /** The generation that superseded it. */
  readonly by: number;
  readonly killSignal: KillSignal;
  /** Whether the signal was delivered (false when it was already gone or the kill was refused). */
  readonly delivered: boolean;
}

/**
 * A superseded generation has settled: the process really is gone now. Its
 * exit is reported here, never as `exit`, so it cannot be taken for the
 * successor's.
 *
 * @example
 * ```ts
 * import { GenerationTable, childProcessSource, type RetiredEvent } from "./mod.ts";
 * const table = new GenerationTable(childProcessSource());
 * table.on("retired", (e: RetiredEvent) => console.log(e.generation, e.signal)); // "1 SIGTERM"
 * table.spawn("k", { command: "sleep", args: ["5"] });
 * table.spawn("k", { command: "true" });
 * ```
 */
export interface RetiredEvent extends GenerationRef {
  readonly pid: number | null;
  readonly by: number;
  readonly code: number | null;
  readonly signal: string | null;
  readonly error: GenerationError | null;
}

/**
 * Everything a `GenerationTable` emits. Every generation ends with exactly
 * one of `exit` (it owned the key when it settled) or `retired` (it had
 * been superseded).
 *
 * @example
 * ```ts
 * import { GenerationTable, childProcessSource, type GenerationEvents } from "./mod.ts";
 * const table = new GenerationTable(childProcessSource());
 * const log = (name: keyof GenerationEvents) => table.on(name, (e) => console.log(name, e.key, e.generation));
 * (["output", "exit", "error", "superseded", "retired"] as const).forEach(log);
 * table.spawn("k", { command: "echo", args: ["hi"] }); // "output k 1", "exit k 1"
 * ```
 */
export interface GenerationEvents {
  output: OutputEvent;
  exit: ExitEvent;
  error: GenerationErrorEvent;
  superseded: SupersededEvent;
  retired: RetiredEvent;
}
