/**
 * kill-during-restart: the daemon asks the module to kill a task and,
 * before the kill has got anywhere, drains the module for a restart.
 * Expected: the kill is carried out (now, or by the next module), and the
 * task ends `killed`.
 *
 * It reproduced a bug on 252 and 257: the old module closed with the kill
 * in flight (no signal sent yet, nothing recorded), the next module adopted
 * the task as `running`, and it ran on as if no kill had been asked for.
 * Fixed: `close` now waits for the kill ladders under way.
 */
import { defineScenario } from "../inside/define-scenario.ts";
import { runIfMain } from "../inside/run-if-main.ts";

const scenario = defineScenario({
  name: "kill-during-restart",
  summary: "a kill asked for just before a drain 'restart' is not lost",
  timeoutMs: 40_000,
  async inside(ctx) {
    const d = ctx.daemon();
    let mod = await d.start();
    const t = await d.run({ id: "victim", argv: ["bash", "-c", "trap 'echo bye; exit 0' TERM; echo armed; while :; do sleep 0.1; done"] });
    // A TERM before bash has set its trap ends it without the trap (seen in CI under load): the kill comes after.
    await ctx.waitFor("the victim to set its TERM trap", () => ctx.output(t.id).includes("armed"));
    const killing = mod.request("kill", { id: t.id, graceMs: 2000 }).then((r) => ({ ok: true, how: r.how }), (e: Error) => ({ ok: false, error: e.message }));
    ctx.mark("kill", "kill asked, then at once a drain 'restart'");
    mod = await d.restart("restart");
    const reply = await killing;
    ctx.fact("killReply", reply);
    ctx.fact("replay", mod.ready.replay);
    const done = await ctx.completion(d, t.id, 10_000).catch(() => null);
    const record = await ctx.record(t.id);
    ctx.check("the task ended killed (by the old module or the next one)", done?.state === "killed", { completion: done, stored: { state: record?.state, killStartedAt: record?.killStartedAt } });
    ctx.check("its TERM trap ran", ctx.output(t.id).includes("bye"), ctx.output(t.id));
    await d.stop("disable");
  },
});
export default scenario;
runIfMain(import.meta.url, scenario.name);
