/**
 * A span of time as a person reads it in a table: `0.4s`, `12s`, `3m12s`,
 * `2h05m`, `3d04h`. Negative spans (a clock that stepped back) read as `0s`.
 *
 * @example
 * ```ts
 * import { span } from "./relative-time.ts";
 * console.log(span(420), span(12_300), span(192_000), span(7_500_000)); // "0.4s" "12s" "3m12s" "2h05m"
 * ```
 */
export function span(ms: number): string {
  if (!Number.isFinite(ms) || ms <= 0) return "0s";
  if (ms < 10_000) return `${(Math.floor(ms / 100) / 10).toString()}s`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${pad(s % 60)}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${pad(Math.floor(s / 60) % 60)}m`;
  return `${Math.floor(s / 86400)}d${pad(Math.floor(s / 3600) % 24)}h`;
}

/** How long ago an ISO time was, from `now`: `3m12s ago`. */
export function ago(iso: string, now: number): string {
  return `${span(now - Date.parse(iso))} ago`;
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}
