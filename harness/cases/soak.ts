/**
 * soak: the restart soak inside the systemd container, under the daemon
 * simulator, with tasks in user scopes: 10–30 tasks in flight (short, long,
 * failing, output-heavy, TERM-ignoring, escaping with setsid) and the
 * module restarted again and again, the cgroup kill landing at random
 * moments (in the middle of spawns, kill ladders and replay), then one stop
 * (`disable`). `soak-long` is the same with 500 restarts, by name only;
 * `soak-cgroup-v2` and `soak-long-cgroup-v2` put the tasks in outlive's own
 * cgroups (a delegated subtree) instead, also by name only.
 */
import { runSoak } from "../inside/soak/soak.ts";
import { defineScenario, type Scenario } from "../inside/define-scenario.ts";
import { runIfMain } from "../inside/run-if-main.ts";

/** The placements a soak can put its tasks in: both survive a restart. */
export type SoakPlacement = "systemd-scope" | "cgroup-v2";

/** A soak scenario of a given length, with its tasks in `placement`. */
export function soakScenario(name: string, restarts: number, timeoutMs: number, placement: SoakPlacement = "systemd-scope"): Scenario {
  return defineScenario({
    name,
    summary: `${restarts} restarts at random moments under load (${placement}): one true outcome per task, nothing left behind`,
    timeoutMs,
    async inside(ctx) {
      const report = await runSoak({
        storage: ctx.storage,
        prefix: ctx.prefix,
        moduleCgroupParent: ctx.cgroup.dir,
        placement,
        restarts,
        inFlight: [10, 30],
        log: (line) => ctx.log(line),
      });
      ctx.log(
        `soak seed ${report.seed} (${report.placement}): ${report.restartsSurvived} restarts survived ` +
          `(${JSON.stringify(report.faults)}), ${report.tasksRun} tasks, outcomes ${JSON.stringify(report.outcomes)}, ` +
          `by kind ${JSON.stringify(report.outcomesByKind)}, lost with run returned ${report.lost.runReturned}, ` +
          `lost with run cut short ${report.lost.runCutShort} (reasons ${JSON.stringify(report.lostReasons)}), ${report.completionsDelivered} completions delivered`,
      );
      const { modules, faultMarks, deliveredIds, ...rest } = report;
      ctx.fact("soak", { ...rest, violations: report.violations.slice(0, 20) });
      // Its deliveries, per task, in the report's tasks and on the timeline's lanes (the soak's simulator is no ctx.daemon()).
      for (const id of deliveredIds) ctx.deliveries.push({ storage: ctx.storage, id });
      // The soak's own simulator, on the timeline like a scenario daemon's: a band per module, a mark per fault.
      for (const m of modules) ctx.incarnations.push({ daemon: "soak", runtime: "node", end: m.endedAt ? "ended by the next fault" : null, ...m });
      for (const f of faultMarks) {
        ctx.marks.push({ at: f.at, kind: f.kind, label: `soak: ${f.kind} (${f.reason})` });
        if (f.killedAt) ctx.marks.push({ at: f.killedAt, kind: "cgroup.kill", label: "soak: cgroup.kill on the module cgroup" });
        if (f.readyAt) ctx.marks.push({ at: f.readyAt, kind: "ready", label: "soak: new module replayed" });
      }
      ctx.check(`tasks went into ${placement === "systemd-scope" ? "user scopes" : "outlive's own cgroups"}`, report.placement === placement, report.placement);
      ctx.check("no task lost whose run had returned", report.lost.runReturned === 0, report.lost);
      // The spawner forks outside the module's cgroup: a run cut short either never started (before its request
      // reached the spawner) or runs and is adopted; none is lost.
      ctx.check("no task lost at all, not even one whose run was cut short", report.lost.runCutShort === 0, report.lostReasons);
      ctx.check(`survived ${restarts} restarts`, report.restartsSurvived === restarts, report.restartsSurvived);
      ctx.check("no invariant violated", report.violations.length === 0, report.violations.slice(0, 10));
      ctx.check("no task process, scope or cgroup left after the final stop", report.leftovers.length === 0, report.leftovers);
      ctx.check("no unrelated process signalled", report.bystandersAlive);
      ctx.check("the set-up's own units are gone", (await ctx.units()).length === 0, await ctx.units());
    },
  });
}

const scenario = soakScenario("soak", 12, 150_000);
export default scenario;
runIfMain(import.meta.url, scenario.name);
