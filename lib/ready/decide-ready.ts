import type { ReadyAtSource, ReadySpec } from "./ready-spec.ts";

/** A condition seen to hold: when, and whether in the first look after replay adopted the task. */
export interface Sighting {
  at: number;
  afterReplay: boolean;
}

/** What has been seen of each of a task's conditions so far. */
export interface ReadySightings {
  log?: Sighting;
  port?: Sighting;
  http?: Sighting;
}

/**
 * When a task became ready, and what dates it: once every condition its
 * spec names has been seen, the moment the last of them was, said as
 * `line-seen` (its output's matching line), `probe` (a port or HTTP probe),
 * or `probe-after-replay` (the first look after this supervisor adopted it:
 * it may have been ready since some time while no supervisor ran). Null
 * while a condition is still unseen. Pure.
 *
 * @example
 * ```ts
 * import { readyMoment } from "./decide-ready.ts";
 * const spec = { log: "ready", port: 5173, http: null, timeoutSeconds: 60 };
 * console.log(readyMoment(spec, { log: { at: 10, afterReplay: false } })); // null
 * console.log(readyMoment(spec, { log: { at: 10, afterReplay: false }, port: { at: 25, afterReplay: false } })); // { at: 25, source: "probe" }
 * console.log(readyMoment({ ...spec, port: null }, { log: { at: 9, afterReplay: true } })); // { at: 9, source: "probe-after-replay" }
 * ```
 */
export function readyMoment(spec: ReadySpec, seen: ReadySightings): { at: number; source: ReadyAtSource } | null {
  const wanted: Array<["log" | "port" | "http", unknown]> = [["log", spec.log], ["port", spec.port], ["http", spec.http]];
  let last: { kind: "log" | "port" | "http"; s: Sighting } | null = null;
  for (const [kind, condition] of wanted) {
    if (condition === null) continue;
    const s = seen[kind];
    if (!s) return null;
    if (!last || s.at >= last.s.at) last = { kind, s };
  }
  if (!last) return null;
  const source: ReadyAtSource = last.s.afterReplay ? "probe-after-replay" : last.kind === "log" ? "line-seen" : "probe";
  return { at: last.s.at, source };
}

/**
 * How long to wait before the next probe of a port or URL, `sinceMs` after
 * the watch began: often at first, when a dev server is starting and an
 * agent waits on it, then less and less. Pure.
 *
 * @example
 * ```ts
 * import { probeInterval } from "./decide-ready.ts";
 * console.log(probeInterval(0), probeInterval(15_000), probeInterval(120_000), probeInterval(900_000)); // 20 100 500 1000
 * ```
 */
export function probeInterval(sinceMs: number): number {
  if (sinceMs < 10_000) return 20;
  if (sinceMs < 60_000) return 100;
  if (sinceMs < 300_000) return 500;
  return 1000;
}
