import { normalizeOptions } from "../../lib/supervisor/options.ts";

/**
 * What a supervisor opened with default options starts its tasks under here: outlive-shim where one is
 * found (the build beside the sources, `OUTLIVE_SHIM`), else the shell wrapper (no cargo to build it, or
 * `OUTLIVE_SHIM=none`, as `npm test`'s second run of the core suites sets it). Tests that look at a task's
 * own processes expect what this says.
 */
export function defaultProgram(): "shim" | "wrapper" {
  return normalizeOptions({}).shim.path !== null ? "shim" : "wrapper";
}
