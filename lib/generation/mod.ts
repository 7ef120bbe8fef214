/**
 * Keyed process table with generations: a re-spawned process never inherits
 * its killed predecessor's output or exit. See field-notes section 3.
 *
 * @example
 * ```ts
 * import { GenerationTable, childProcessSource } from "./mod.ts";
 * const table = new GenerationTable(childProcessSource());
 * table.on("exit", (e) => console.log(e.key, e.generation, e.code));
 * table.spawn("session-7", { command: "true" });
 * ```
 *
 * @module
 */
export { GenerationTable, type GenerationTableOptions, type GenerationInfo, type GenerationKillResult, type AdoptResult, type SpawnResult } from "./table.ts";
export { isCurrentGeneration, type KeyState } from "./check.ts";
export { childProcessSource, type ChildProcessSpec, type ChildProcessSourceOptions } from "./child-process.ts";
export { GenerationError, type GenerationErrorCode } from "./errors.ts";
export type { KillSignal, OutputStream, ProcessHandle, ProcessSink, ProcessSource } from "./handle.ts";
export type { GenerationErrorEvent, ExitEvent, GenerationEvents, GenerationRef, OutputEvent, RetiredEvent, SupersededEvent } from "./events.ts";
