/**
 * restart-unscoped: with `process-group` placement the tasks live in the
 * module's cgroup, so the daemon's cgroup.kill takes them too. The next
 * module must say so plainly: `lost`, the restart as the reason, their
 * output tail kept — never "fate unknown".
 */
import { existsSync } from "node:fs";
import { defineScenario } from "../inside/define-scenario.ts";
import { runIfMain } from "../inside/run-if-main.ts";

const scenario = defineScenario({
  name: "restart-unscoped",
  summary: "process-group tasks die with the module's cgroup and are reported lost, with the reason and their output tail",
  async inside(ctx) {
    const d = ctx.daemon({ placement: "process-group" });
    let mod = await d.start();
    ctx.check("the module uses process-group placement", mod.ready.placement === "process-group", mod.ready);
    const ticker = await d.run({ id: "ticker", shell: "i=1; while :; do echo line $i; i=$((i+1)); sleep 0.1; done" });
    const trap = await d.run({ id: "exit-trap", argv: ["bash", "-c", "trap 'echo cleanup ran' EXIT; echo serving; sleep 60"] });
    ctx.check("the tasks run inside the module's cgroup (nothing else is possible here)", [ticker, trap].every((t) => String(t.supervisorCgroup).includes("/module-")), [ticker.supervisorCgroup, trap.supervisorCgroup]);
    // The ticker has written some lines, and the trap is set (it is set before "serving").
    await ctx.waitFor("the ticker's third line and the trap", () => ctx.output("ticker").includes("line 3\n") && ctx.output("exit-trap") === "serving\n");

    mod = await d.restart("restart");
    ctx.check("the tasks' processes are gone", ![ticker.pid, trap.pid].some((pid) => existsSync(`/proc/${pid}`)), [ticker.pid, trap.pid]);
    const finished: Array<{ id: string; state: string; reason: string }> = mod.ready.replay.finished;
    for (const id of ["ticker", "exit-trap"]) {
      const f = finished.find((x) => x.id === id);
      ctx.check(`${id} is reported lost`, f?.state === "lost", f);
      ctx.check(`${id}'s reason names the restart and the module's cgroup`, /killed with the supervisor's cgroup when the supervisor restarted at/.test(f?.reason ?? ""), f?.reason);
      ctx.check(`${id}'s reason is not "fate unknown"`, !/unknown/i.test(f?.reason ?? "unknown"), f?.reason);
      const done = await ctx.completion(d, id);
      ctx.check(`${id}'s completion carries its output tail`, typeof done.outputTail === "string" && done.outputTail.length > 0, done.outputTail);
    }
    const tickerDone = await ctx.completion(d, "ticker");
    ctx.check("ticker's tail holds its last lines", /line \d+\n?$/.test(tickerDone.outputTail ?? ""), tickerDone.outputTail);
    const trapDone = await ctx.completion(d, "exit-trap");
    ctx.check("exit-trap's EXIT trap could not run (SIGKILL from outside), and the tail shows it", !/cleanup ran/.test(trapDone.outputTail ?? ""), trapDone.outputTail);
    await ctx.sleep(300);
    const counts = ["ticker", "exit-trap"].map((id) => d.deliveries().filter((t) => t.id === id).length);
    ctx.check("each completion was delivered once", counts.every((n) => n === 1), counts);
    await d.stop("disable");
  },
});
export default scenario;
runIfMain(import.meta.url, scenario.name);
