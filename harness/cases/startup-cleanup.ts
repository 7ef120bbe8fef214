/**
 * startup-cleanup: at startup a module stops the scope of a task whose
 * record in its storage is terminal, and leaves alone a task scope of the
 * same prefix that has no record in its storage (another instance may own it).
 */
import { spawn } from "node:child_process";
import { TaskStore } from "../../lib/internal.ts";
import { defineScenario } from "../inside/define-scenario.ts";
import { runIfMain } from "../inside/run-if-main.ts";

const scenario = defineScenario({
  name: "startup-cleanup",
  summary: "a terminal record's live scope is stopped at startup; a scope with no record here is left alone",
  async inside(ctx) {
    const d = ctx.daemon();
    await d.start();
    const t = await d.run({ id: "stale", argv: ["sleep", "300"] });
    await d.killModule("module gone");
    // A supervisor that died after writing the terminal record but before stopping the scope leaves exactly this.
    const record = await ctx.record("stale");
    if (!record) throw new Error("stale's record cannot be read");
    await (await TaskStore.open(ctx.storage)).write({
      ...record,
      state: "killed",
      reason: "killed by request (scenario: the record was written, the scope not yet stopped)",
      finishedAt: new Date().toISOString(),
    });
    ctx.mark("edit", "stale's record made terminal, its scope still live");

    // A scope of the same prefix with no record in this storage: another instance's.
    const foreignUnit = `${ctx.prefix}-task-foreign.scope`;
    const foreign = spawn("systemd-run", ["--user", "--scope", "--quiet", "--collect", `--unit=${foreignUnit}`, `--slice=${ctx.prefix}.slice`, "sleep", "300"], { stdio: "ignore", detached: true });
    foreign.unref();
    await ctx.waitFor("the foreign scope to start", async () => (await ctx.units()).includes(foreignUnit), 10_000);
    ctx.check("the stale task's scope is still live before startup", (await ctx.units()).includes(t.location.unit));

    const mod = await d.start();
    const report = mod.ready.replay;
    ctx.fact("replay", report);
    ctx.check("startup stopped the terminal record's scope", report.cleanedUp.includes("stale"), report.cleanedUp);
    const gone = await ctx.waitFor("the stale scope to go", async () => !(await ctx.units()).includes(t.location.unit), 10_000).catch(() => false);
    ctx.check("the stale scope is gone", gone === true, await ctx.units());
    ctx.check("the foreign scope is named foreign, not touched", report.foreign.includes("foreign"), report.foreign);
    await ctx.sleep(500);
    ctx.check("the foreign scope still runs", (await ctx.units()).includes(foreignUnit), await ctx.units());
    await d.stop("disable");
    ctx.check("even drain 'disable' leaves the foreign scope alone", (await ctx.units()).includes(foreignUnit), await ctx.units());
    await ctx.systemctl("stop", foreignUnit);
  },
});
export default scenario;
runIfMain(import.meta.url, scenario.name);
