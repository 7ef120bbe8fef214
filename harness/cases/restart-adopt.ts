/**
 * restart-adopt: four tasks in systemd user scopes survive a module restart
 * done the field's way (drain "restart", then cgroup.kill on the module's
 * cgroup); the next module adopts all four; they end later with their real
 * exit codes and complete output, and each completion is delivered once.
 */
import { defineScenario, type Scenario } from "../shared/define.ts";
import { runIfMain } from "../inside/run-if-main.ts";

const TICKS = 30;

export function restartAdopt(name: string, runtime: "node" | "deno"): Scenario {
  return defineScenario({
    name,
    runtime,
    summary: `four scoped tasks are adopted after a cgroup.kill restart (module under ${runtime})`,
    timeoutMs: 120_000,
    async inside(ctx) {
      const d = ctx.daemon();
      let mod = await d.start();
      ctx.fact("placementReason", mod.ready.reason);
      ctx.check("the module chose systemd-scope with the user manager", mod.ready.placement === "systemd-scope" && /user manager/.test(mod.ready.reason), mod.ready.reason);

      const specs = [
        { id: "exits-7-later", shell: "echo compiling; sleep 4; echo failed; exit 7" },
        { id: "steady-output", shell: `i=1; while [ $i -le ${TICKS} ]; do echo tick $i; i=$((i+1)); sleep 0.15; done` },
        { id: "exit-trap", argv: ["bash", "-c", "trap 'echo cleanup ran' EXIT; echo serving; sleep 60"] },
        { id: "sleeper", argv: ["sleep", "5"] },
      ];
      for (const spec of specs) {
        const t = await d.run(spec);
        ctx.check(`${spec.id} runs in its own user scope`, t.location.unit === `${ctx.prefix}-task-${spec.id}.scope` && t.location.manager === "user", t.location);
        ctx.check(`${spec.id} is outside the module's cgroup`, typeof t.location.cgroup === "string" && !t.location.cgroup.includes("/module-"), t.location.cgroup);
      }
      // Each has begun its work (exit-trap's trap is set before it says "serving").
      await ctx.waitFor("every task to start its work", () =>
        ctx.output("exits-7-later") !== "" && ctx.output("steady-output") !== "" && ctx.output("exit-trap") === "serving\n");

      mod = await d.restart("restart");
      const adopted: string[] = mod.ready.replay.adopted;
      ctx.check("the new module adopted all four", specs.every((s) => adopted.includes(s.id)), mod.ready.replay);

      const kill = await mod.request("kill", { id: "exit-trap", graceMs: 2000 });
      ctx.mark("kill", "kill exit-trap through the new module");
      ctx.check("exit-trap is killed with TERM first", kill.how === "term", kill.how);

      const done = Object.fromEntries(await Promise.all(specs.map(async (s) => [s.id, await ctx.completion(d, s.id, 30_000)])));
      ctx.check("exits-7-later exited 7", done["exits-7-later"].state === "exited" && done["exits-7-later"].exitCode === 7, done["exits-7-later"]);
      ctx.check("exits-7-later has its whole output", ctx.output("exits-7-later") === "compiling\nfailed\n", ctx.output("exits-7-later"));
      const ticks = Array.from({ length: TICKS }, (_, i) => `tick ${i + 1}\n`).join("");
      ctx.check("steady-output exited 0", done["steady-output"].state === "exited" && done["steady-output"].exitCode === 0, done["steady-output"]);
      ctx.check(`steady-output has all ${TICKS} lines, none lost across the restart`, ctx.output("steady-output") === ticks, ctx.output("steady-output").slice(-200));
      ctx.check("exit-trap ended killed", done["exit-trap"].state === "killed", done["exit-trap"]);
      ctx.check("exit-trap's EXIT trap ran", ctx.output("exit-trap") === "serving\ncleanup ran\n", ctx.output("exit-trap"));
      ctx.check("sleeper exited 0", done.sleeper.state === "exited" && done.sleeper.exitCode === 0, done.sleeper);

      // One more restart: completions acknowledged by the daemon must not come again.
      await ctx.sleep(500);
      mod = await d.restart("restart");
      await ctx.sleep(700);
      const counts = Object.fromEntries(specs.map((s) => [s.id, d.deliveries().filter((t) => t.id === s.id).length]));
      ctx.check("each completion was delivered exactly once over three incarnations", Object.values(counts).every((n) => n === 1), counts);
      ctx.check("no task scope is left", (await ctx.units()).length === 0, await ctx.units());
      await d.stop("disable");
    },
  });
}

const scenario = restartAdopt("restart-adopt", "node");
export default scenario;
runIfMain(import.meta.url, scenario.name);
