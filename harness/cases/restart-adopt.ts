/**
 * restart-adopt: four tasks in systemd user scopes survive a module restart
 * done the field's way (drain "restart", then cgroup.kill on the module's
 * cgroup); the next module adopts all four; they end later with their real
 * exit codes and complete output, and each completion is delivered once.
 *
 * Every task must still run when the new module replays, so on a slow
 * machine (a vm under TCG: a restart takes 4–18 s there, 0.2 s under
 * nspawn) the host passes a time scale and every duration here is
 * multiplied by it; the checks are the same on every machine.
 */
import { defineScenario, type Scenario } from "../inside/define-scenario.ts";
import { runIfMain } from "../inside/run-if-main.ts";
import { timeScaleOf } from "../shared/time-scale.ts";

const TICKS = 30;
/** Bound on the whole run: nspawn needs about 8 s, a vm under TCG (scale 5) about 80 s. */
const TIMEOUT_MS = 240_000;
/** How many module starts the tasks' launch and the restart after it take, about. */
const RESTART_STARTS = 4;

export function restartAdopt(name: string, runtime: "node" | "deno"): Scenario {
  return defineScenario({
    name,
    runtime,
    summary: `four scoped tasks are adopted after a cgroup.kill restart (module under ${runtime})`,
    timeoutMs: TIMEOUT_MS,
    async inside(ctx) {
      const scale = timeScaleOf(ctx.params);
      ctx.fact("timeScale", scale);
      // A module's start, measured: the runs of four tasks and a restart (drain, kill, start) take about four of them.
      const d = ctx.daemon(); // its bound on "ready" is module-client's, times the scale
      const startBegan = Date.now();
      let mod = await d.start();
      const startMs = Date.now() - startBegan;
      const slack = (RESTART_STARTS * startMs) / 1000;
      ctx.fact("moduleStartMs", startMs);
      // Each task's time is the scaled one plus that slack: on a machine loaded beyond its scale it still spans the restart.
      const scaled = (seconds: number) => Number((seconds * scale).toFixed(2));
      const spanning = (seconds: number) => Number((seconds * scale + slack).toFixed(2));
      ctx.fact("placementReason", mod.ready.reason);
      ctx.check("the module chose systemd-scope with the user manager", mod.ready.placement === "systemd-scope" && /user manager/.test(mod.ready.reason), mod.ready.reason);

      const specs = [
        { id: "exits-7-later", shell: `echo compiling; sleep ${spanning(4)}; echo failed; exit 7` },
        { id: "steady-output", shell: `i=1; while [ $i -le ${TICKS} ]; do echo tick $i; i=$((i+1)); sleep ${Number((0.15 * scale + slack / TICKS).toFixed(3))}; done` },
        { id: "exit-trap", argv: ["bash", "-c", `trap 'echo cleanup ran' EXIT; echo serving; sleep ${scaled(60)}`] },
        { id: "sleeper", argv: ["sleep", String(spanning(5))] },
      ];
      // The first to end (exits-7-later) must end after the replay: its margin is in the facts.
      const firstEndsAt = Date.now() + spanning(4) * 1000;
      for (const spec of specs) {
        const t = await d.run(spec);
        ctx.check(`${spec.id} runs in its own user scope`, t.location.unit === `${ctx.prefix}-task-${spec.id}.scope` && t.location.manager === "user", t.location);
        ctx.check(`${spec.id} is outside the module's cgroup`, typeof t.location.cgroup === "string" && !t.location.cgroup.includes("/module-"), t.location.cgroup);
      }
      // Each has begun its work (exit-trap's trap is set before it says "serving").
      await ctx.waitFor("every task to start its work", () =>
        ctx.output("exits-7-later") !== "" && ctx.output("steady-output") !== "" && ctx.output("exit-trap") === "serving\n", scaled(15) * 1000);

      const restartStarted = Date.now();
      mod = await d.restart("restart");
      ctx.fact("restartMs", Date.now() - restartStarted);
      ctx.fact("firstTaskEndAfterReplayMs", firstEndsAt - Date.now());
      const adopted: string[] = mod.ready.replay.adopted;
      ctx.check("the new module adopted all four", specs.every((s) => adopted.includes(s.id)), mod.ready.replay);

      const kill = await mod.request("kill", { id: "exit-trap", graceMs: 2000 });
      ctx.mark("kill", "kill exit-trap through the new module");
      ctx.check("exit-trap is killed with TERM first", kill.how === "term", kill.how);

      const done = Object.fromEntries(await Promise.all(specs.map(async (s) => [s.id, await ctx.completion(d, s.id, spanning(30) * 1000)])));
      ctx.check("exits-7-later exited 7", done["exits-7-later"].state === "exited" && done["exits-7-later"].exitCode === 7, done["exits-7-later"]);
      ctx.check("exits-7-later has its whole output", ctx.output("exits-7-later") === "compiling\nfailed\n", ctx.output("exits-7-later"));
      const ticks = Array.from({ length: TICKS }, (_, i) => `tick ${i + 1}\n`).join("");
      ctx.check("steady-output exited 0", done["steady-output"].state === "exited" && done["steady-output"].exitCode === 0, done["steady-output"]);
      ctx.check(`steady-output has all ${TICKS} lines, none lost across the restart`, ctx.output("steady-output") === ticks, ctx.output("steady-output").slice(-200));
      ctx.check("exit-trap ended killed", done["exit-trap"].state === "killed", done["exit-trap"]);
      ctx.check("exit-trap's EXIT trap ran", ctx.output("exit-trap") === "serving\ncleanup ran\n", ctx.output("exit-trap"));
      ctx.check("sleeper exited 0", done.sleeper.state === "exited" && done.sleeper.exitCode === 0, done.sleeper);

      // One more restart: completions acknowledged by the daemon must not come again.
      await ctx.sleep(scaled(0.5) * 1000);
      mod = await d.restart("restart");
      await ctx.sleep(scaled(0.7) * 1000);
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
