import type { GenerationError } from "./errors.ts";
import type { KillSignal, OutputStream } from "./handle.ts";

/** Which run under which key: the identity every event carries. */
export interface GenerationRef {
  readonly key: string;
  /** From a per-table counter that only grows, so it is never reused, not even after the key's record is gone. */
  readonly generation: number;
}

/** Output of the generation that owns the key at the moment of delivery. */
export interface OutputEvent extends GenerationRef {
  readonly pid: number | null;
  readonly stream: OutputStream;
  readonly data: string | Uint8Array;
}

/**
 * The one final event of a generation that still owned its key when it
 * settled. The key is already free when this is emitted, so a listener may
 * spawn under it again at once.
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

/** A fault of the owning generation that did not end it (e.g. a kill was refused). */
export interface ErrorEvent extends GenerationRef {
  readonly pid: number | null;
  readonly error: GenerationError;
}

/**
 * A spawn under the key took it over from this generation. Emitted once per
 * superseded generation, after the successor was started and the
 * predecessor was signalled. From here on nothing of this generation is
 * delivered as `output`, `exit` or `error`.
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
 */
export interface GenerationEvents {
  output: OutputEvent;
  exit: ExitEvent;
  error: ErrorEvent;
  superseded: SupersededEvent;
  retired: RetiredEvent;
}
