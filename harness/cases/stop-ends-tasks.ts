/**
 * stop-ends-tasks: drain `disable` ends every task scope; a connection
 * closed with no drain notice ends them too; drain `restart` ends none.
 */
import { defineScenario } from "../inside/define-scenario.ts";
import { runIfMain } from "../inside/run-if-main.ts";
import type { ScenarioContext } from "../inside/context.ts";
import type { ScenarioDaemon } from "../inside/scenario-daemon.ts";

async function startTwo(ctx: ScenarioContext, label: string): Promise<{ d: ScenarioDaemon; units: string[] }> {
  const d = ctx.daemon({ name: label, storage: ctx.storageFor(label) });
  await d.start();
  const a = await d.run({ id: `${label}-sleeper`, argv: ["sleep", "300"] });
  const b = await d.run({ id: `${label}-trapper`, argv: ["bash", "-c", "trap 'echo term trap ran; exit 0' TERM; echo armed; while :; do sleep 0.1; done"] });
  // A TERM before bash has set its trap ends it without the trap (seen once under CI's load): the stop comes after.
  await ctx.waitFor(`${label}-trapper to set its TERM trap`, () => ctx.output(`${label}-trapper`, "stdout", d.storage).includes("armed"));
  return { d, units: [a.location.unit, b.location.unit] };
}

const scenario = defineScenario({
  name: "stop-ends-tasks",
  summary: "drain disable and a hang-up end every task scope; drain restart ends none",
  async inside(ctx) {
    const live = async (units: string[]) => {
      const now = await ctx.units();
      return units.filter((u) => now.includes(u));
    };

    const disable = await startTwo(ctx, "disable");
    await disable.d.stop("disable");
    ctx.check("drain disable: no task scope is left", (await live(disable.units)).length === 0, await live(disable.units));
    const disabled = await Promise.all(["disable-sleeper", "disable-trapper"].map((id) => ctx.record(id, disable.d.storage)));
    ctx.check("drain disable: both tasks ended killed, the reason names the disable", disabled.every((t) => t?.state === "killed" && /disable/.test(t.reason ?? "")), disabled.map((t) => [t?.state, t?.reason]));
    ctx.check("drain disable: the TERM trap ran (ladder, not a bare KILL)", ctx.output("disable-trapper", "stdout", disable.d.storage).includes("term trap ran"));

    const hang = await startTwo(ctx, "hangup");
    await hang.d.hangUp();
    ctx.check("hang-up: the module exited", hang.d.module.exitedAt !== null);
    ctx.check("hang-up: no task scope is left", (await live(hang.units)).length === 0, await live(hang.units));
    const hungUp = await Promise.all(["hangup-sleeper", "hangup-trapper"].map((id) => ctx.record(id, hang.d.storage)));
    ctx.check("hang-up: both tasks ended killed", hungUp.every((t) => t?.state === "killed"), hungUp.map((t) => [t?.state, t?.reason]));

    const restart = await startTwo(ctx, "restart");
    await restart.d.drainOnly("restart");
    await ctx.sleep(1000);
    ctx.check("drain restart: both task scopes still run after the module exited", (await live(restart.units)).length === 2, await live(restart.units));
    const next = await restart.d.start();
    ctx.check("drain restart: the next module adopts both", next.ready.replay.adopted.length === 2, next.ready.replay);
    await restart.d.stop("disable");
  },
});
export default scenario;
runIfMain(import.meta.url, scenario.name);
