import type { Scenario as ScenarioOf } from "../shared/define.ts";
import type { ScenarioContext } from "./context.ts";

export { DEFAULT_SCENARIO_TIMEOUT_MS, type RebootHow } from "../shared/define.ts";
export { ScenarioSkip } from "../shared/skip.ts";

/** A scenario as its author writes it: its steps are handed the inside's ScenarioContext. */
export type Scenario = ScenarioOf<ScenarioContext>;

/**
 * Declares a scenario; the identity function, there for the type and the
 * defaults in one place.
 *
 * @example
 * ```ts
 * import { defineScenario } from "outlive/harness";
 * export default defineScenario({
 *   name: "hello",
 *   summary: "a task's exit code survives",
 *   async inside(ctx) {
 *     const d = ctx.daemon();
 *     await d.start();
 *     const t = await d.run({ shell: "exit 3" });
 *     const done = await ctx.completion(d, t.id);
 *     ctx.check("exit code 3", done.exitCode === 3, done);
 *   },
 * });
 * ```
 */
export function defineScenario(scenario: Scenario): Scenario {
  return scenario;
}
