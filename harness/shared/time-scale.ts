/**
 * How much slower than a container the machine a scenario runs on is, as
 * one number the host side passes (`RunInOptions.params`) and a scenario
 * reads (`ctx.params`). A scenario whose point is that work runs ACROSS
 * something slow (a module restart) multiplies its task durations by it,
 * so each task still spans that moment; its checks stay the same.
 */

/** The key in `RunInOptions.params` / `ctx.params`. */
export const TIME_SCALE_PARAM = "timeScale";

/**
 * The default under software emulation (qemu TCG): a module restart takes
 * 4–18 s there on two shared cores against 0.2–0.3 s under nspawn, and a
 * task of 4 s must outlast the launch of the others plus the restart.
 */
export const TCG_TIME_SCALE = 5;

/** Largest scale accepted: beyond it a scenario would outlast every bound the harness has. */
const MAX_TIME_SCALE = 50;

/**
 * The scale in `params` (default 1), checked: a number from 1 to 50.
 *
 * @example
 * ```ts
 * import { timeScaleOf } from "./time-scale.ts";
 * console.log(timeScaleOf({}), timeScaleOf({ timeScale: "10" })); // 1 10
 * timeScaleOf({ timeScale: "fast" }); // throws: Expected the `timeScale` param to be a number from 1 to 50, got "fast"
 * ```
 */
export function timeScaleOf(params: Readonly<Record<string, string>>): number {
  const raw = params[TIME_SCALE_PARAM];
  if (raw === undefined) return 1;
  const n = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(n) || n < 1 || n > MAX_TIME_SCALE) {
    throw new Error(`Expected the \`${TIME_SCALE_PARAM}\` param to be a number from 1 to ${MAX_TIME_SCALE}, got ${JSON.stringify(raw)}`);
  }
  return n;
}
