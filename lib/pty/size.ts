import { describeValue, OutliveError } from "../errors.ts";

/** A terminal's size in character cells. */
export interface PtySize {
  cols: number;
  rows: number;
}

/**
 * The largest side a terminal may have: far beyond any screen, well inside what the kernel's `winsize` holds.
 *
 * @example
 * ```ts
 * import { MAX_PTY_SIDE } from "./size.ts";
 * console.log(MAX_PTY_SIDE); // 10000
 * ```
 */
export const MAX_PTY_SIDE = 10000;

/**
 * The size a PTY task gets when `pty: {}` names none: the classic 80 x 24.
 *
 * @example
 * ```ts
 * import { DEFAULT_PTY_SIZE } from "./size.ts";
 * console.log(DEFAULT_PTY_SIZE); // { cols: 80, rows: 24 }
 * ```
 */
export const DEFAULT_PTY_SIZE: PtySize = { cols: 80, rows: 24 };

/**
 * Checks a terminal size once, at the edge: each side a whole number from 1
 * to MAX_PTY_SIDE. Missing sides take the default (80 x 24).
 *
 * @example
 * ```ts
 * import { checkPtySize } from "./size.ts";
 * console.log(checkPtySize({ cols: 120 })); // { cols: 120, rows: 24 }
 * try { checkPtySize({ cols: 0 }); } catch (e) { console.log((e as Error).message); }
 * // "Expected `pty.cols` to be a whole number from 1 to 10000, got `0` (number)"
 * ```
 */
export function checkPtySize(value: unknown, name = "pty"): PtySize {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new OutliveError("E_BAD_OPTION", `Expected \`${name}\` to be an object { cols, rows }, got ${describeValue(value)}`);
  }
  const v = value as Record<string, unknown>;
  return { cols: side(v.cols, `${name}.cols`, DEFAULT_PTY_SIZE.cols), rows: side(v.rows, `${name}.rows`, DEFAULT_PTY_SIZE.rows) };
}

function side(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || (value as number) < 1 || (value as number) > MAX_PTY_SIDE) {
    throw new OutliveError("E_BAD_OPTION", `Expected \`${name}\` to be a whole number from 1 to ${MAX_PTY_SIDE}, got ${describeValue(value)}`);
  }
  return value as number;
}
