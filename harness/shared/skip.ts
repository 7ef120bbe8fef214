/**
 * Thrown by `ctx.skip`: the scenario cannot say anything on this machine, and says why.
 *
 * @example
 * ```ts
 * import { defineScenario, ScenarioSkip } from "outlive/harness";
 * export default defineScenario({
 *   name: "needs-memory",
 *   summary: "skips, with the reason, where cgroup v2 has no memory controller",
 *   async inside(ctx) {
 *     const controllers = (await ctx.$`cat /sys/fs/cgroup/cgroup.controllers`).stdout;
 *     if (!controllers.includes("memory")) ctx.skip("cgroup v2 has no memory controller here");
 *     ctx.check("memory controller present", true);
 *   },
 * });
 * console.log(new ScenarioSkip("why").reason); // "why"
 * ```
 */
export class ScenarioSkip extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "ScenarioSkip";
  }
}
