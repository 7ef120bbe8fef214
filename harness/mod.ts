/**
 * `outlive/harness`: write scenarios of your own — a bug report as steps
 * and checks — and run them with `npx outlive scenario run FILE` in a real
 * systemd container, against outlive's module or your own supervisor.
 *
 * @example
 * ```ts
 * import { defineScenario } from "outlive/harness";
 *
 * export default defineScenario({
 *   name: "my-bug",
 *   summary: "a task started before a restart is still running after it",
 *   async inside(ctx) {
 *     const d = ctx.daemon();
 *     await d.start();
 *     const t = await d.run({ id: "dev", shell: "sleep 30" });
 *     await d.restart("restart");
 *     const now = (await d.request("get", { id: t.id })).task;
 *     ctx.check("still running after the restart", now.state === "running", now);
 *     await d.stop("disable");
 *   },
 * });
 * ```
 */
export { defineScenario, DEFAULT_SCENARIO_TIMEOUT_MS, type RebootHow, type Scenario } from "./inside/define-scenario.ts";
export { ScenarioSkip } from "./shared/skip.ts";
export type { ScenarioContext } from "./inside/context.ts";
export type { ScenarioDaemon } from "./inside/scenario-daemon.ts";
export { DaemonSimulator, type DaemonModule, type RestartMark, type SimulatorOptions } from "./inside/daemon/simulator.ts";
export type { ForeignModule } from "./inside/daemon/foreign-module.ts";
export type { ForeignModuleSpec } from "./inside/daemon/foreign-spec.ts";
export type { ModuleProcess } from "./inside/module/module-client.ts";
export type { Check, Mark, ScenarioReport, TaskFacts, Verdict } from "./shared/report.ts";
export { judge, type Judgement, type Outcome } from "./shared/judge.ts";
/**
 * zx's `$` (also `ctx.$`), for driving a tool's CLI inside the container.
 *
 * @example
 * ```ts
 * import { $ } from "outlive/harness";
 * const out = await $`echo hello`;
 * console.log(out.stdout); // "hello\n"
 * ```
 */
export { $ } from "zx";
