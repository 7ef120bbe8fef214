/**
 * finished-while-down: a task ends while no module runs (the module's cgroup
 * was killed and no module followed for a while); the next module reads
 * its exit marker and reports the real exit code, output and all.
 */
import { defineScenario } from "../inside/define-scenario.ts";
import { runIfMain } from "../inside/run-if-main.ts";

const scenario = defineScenario({
  name: "finished-while-down",
  summary: "a task that ends while no module runs gets its real exit code from the next module",
  async inside(ctx) {
    const d = ctx.daemon();
    await d.start();
    await d.run({ id: "ends-at-2s", shell: "echo start; sleep 2; echo end; exit 42" });
    await d.run({ id: "ends-at-2s-signal", argv: ["sh", "-c", "sleep 2; kill -USR1 $$"] });
    await d.killModule("module down; restarted only after the tasks ended");
    // The tasks end in here, with nobody watching.
    const units = await ctx.waitFor("both task scopes to end", async () => (await ctx.units()).length === 0, 10_000);
    ctx.check("both scopes ended while no module ran", units === true);
    ctx.mark("down", "tasks ended while no module ran");
    const mod = await d.start();
    ctx.mark("ready", "the next module replayed");
    const finished: Array<{ id: string; state: string; exitCode: number | null; reason: string }> = mod.ready.replay.finished;
    const a = finished.find((f) => f.id === "ends-at-2s");
    ctx.check("ends-at-2s: exited 42, read from its exit marker", a?.state === "exited" && a.exitCode === 42, a);
    ctx.check("ends-at-2s: its whole output is there", ctx.output("ends-at-2s") === "start\nend\n", ctx.output("ends-at-2s"));
    const b = finished.find((f) => f.id === "ends-at-2s-signal");
    ctx.check("ends-at-2s-signal: exit code 138 (128 + SIGUSR1), as the wrapper saw it", b?.state === "exited" && b.exitCode === 138, b);
    for (const id of ["ends-at-2s", "ends-at-2s-signal"]) await ctx.completion(d, id);
    ctx.check("each completion delivered once", d.deliveries().length === 2, d.deliveries().map((t) => t.id));
    await d.stop("disable");
  },
});
export default scenario;
runIfMain(import.meta.url, scenario.name);
