/**
 * What a read of `[offset, offset + length)` may be trusted for, given the
 * dropped-up-to offset read after it: bytes below it may have been punched
 * while being read (zeros), so they count as missed, never as output. Pure.
 *
 * @example
 * ```ts
 * import { trustedPart } from "./split.ts";
 * console.log(trustedPart(100, 50, 120)); // { missed: 20, keepFrom: 20 }
 * console.log(trustedPart(100, 50, 0)); // { missed: 0, keepFrom: 0 }
 * ```
 */
export function trustedPart(offset: number, length: number, droppedAfter: number): { missed: number; keepFrom: number } {
  if (droppedAfter <= offset) return { missed: 0, keepFrom: 0 };
  const missed = droppedAfter - offset;
  return { missed, keepFrom: Math.min(missed, length) };
}
