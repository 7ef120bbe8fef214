const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 };

/**
 * Seconds from a duration such as `90s`, `15m`, `12h`, `7d`, `2w` or a bare
 * number of seconds; null when the text is not one.
 *
 * @example
 * ```ts
 * import { parseDuration } from "./duration.ts";
 * console.log(parseDuration("7d"), parseDuration("90"), parseDuration("soon")); // 604800 90 null
 * ```
 */
export function parseDuration(text: string): number | null {
  const match = /^(\d+(?:\.\d+)?)([smhdw]?)$/.exec(text.trim());
  if (!match) return null;
  const seconds = Number(match[1]) * UNITS[match[2] || "s"];
  return Number.isFinite(seconds) ? Math.round(seconds) : null;
}
