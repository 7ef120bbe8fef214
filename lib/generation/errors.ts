import { OutliveError } from "../errors.ts";

/**
 * What went wrong, as a value a caller can switch on.
 *
 * @example
 * ```ts
 * import type { GenerationErrorCode } from "./errors.ts";
 * const code: GenerationErrorCode = "NO_CURRENT";
 * console.log(code); // "NO_CURRENT"
 * ```
 */
export type GenerationErrorCode =
  /** An option of `GenerationTable` or an adapter was out of range. */
  | "INVALID_OPTION"
  /** A key was not a non-empty string. */
  | "INVALID_KEY"
  /** `start()` of the process source threw; the generation never ran. */
  | "START_FAILED"
  /** The process could not be spawned (e.g. ENOENT); it never ran. */
  | "SPAWN_FAILED"
  /** The underlying process reported a fault that did not end it (e.g. a failed kill). */
  | "PROCESS_FAULT"
  /** `adopt` was given a generation this table has already issued or passed. */
  | "GENERATION_TAKEN"
  /** `kill(key)` found no live generation owning the key. */
  | "NO_CURRENT";

/**
 * An `OutliveError` with a generation `code`. The message names the key, generation or option
 * involved, so a person can act on it without the stack.
 *
 * @example
 * ```ts
 * import { OutliveError } from "../errors.ts";
 * import { GenerationError } from "./errors.ts";
 * const e = new GenerationError("NO_CURRENT", "no live generation owns key \"tab-1\"");
 * console.log(e.code, e instanceof OutliveError); // "NO_CURRENT" true
 * ```
 */
export class GenerationError extends OutliveError<GenerationErrorCode> {
  constructor(code: GenerationErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = "GenerationError";
  }
}
