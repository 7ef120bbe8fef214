/**
 * kill-escapees: a task whose children leave its process group (setsid)
 * and its process tree (double fork). Killing the task through outlive
 * must leave its scope empty: the ladder's group signals miss the
 * escapees, the scope's cgroup.kill does not (nor, on a kernel without
 * cgroup.kill, systemd's kill of the scope, pid by pid until it is empty).
 */
import { CgroupV2Placement, cgroupProcs, isRunning, readProcStat } from "../../lib/internal.ts";
import { defineScenario } from "../inside/define-scenario.ts";
import { runIfMain } from "../inside/run-if-main.ts";

const ESCAPE = [
  "setsid sleep 300 &",                    // a new session and process group
  "( setsid sh -c 'sleep 301 & exit 0' & )", // double fork: the sleep is reparented, in another session
  "trap '' TERM",                           // and the task itself ignores TERM
  "echo escaped; sleep 302",
].join("\n");

const scenario = defineScenario({
  name: "kill-escapees",
  summary: "a kill leaves the scope empty, even of setsid and double-forked children",
  async inside(ctx) {
    const d = ctx.daemon({ graceMs: 800 });
    const mod = await d.start();
    // What cgroup-v2 says of this kernel (on one without cgroup.kill, why it is refused), beside the placement that ran.
    ctx.fact("placementReason", mod.ready.reason);
    ctx.fact("cgroupV2Probe", (await new CgroupV2Placement({ prefix: ctx.prefix }).probe()).reason);
    const t = await d.run({ id: "escaper", shell: ESCAPE });
    const dir: string = t.location.cgroupDir;
    // Wait for the escapees themselves, not a count of processes: the wrapper's warden (deadline and
    // output bound, and its sleep) is in the scope before any setsid has run. Three sessions: the task's,
    // `setsid sleep 300`'s, and the double-forked `sleep 301`'s.
    const sessionsOf = (pids: number[]) => new Set(pids.flatMap((pid) => readProcStat(pid)?.sid ?? []));
    const before = await ctx.waitFor("the escapees to start", () => {
      const procs = cgroupProcs(dir);
      return ctx.output("escaper").includes("escaped") && sessionsOf(procs).size >= 3 && procs;
    }, 10_000).catch(() => cgroupProcs(dir));
    const sessions = sessionsOf(before);
    ctx.fact("processesBeforeKill", before.length);
    ctx.check("the task's processes span more than one session", sessions.size > 1, [...sessions]);
    ctx.mark("kill", "kill escaper");
    const r = await mod.request("kill", { id: "escaper", graceMs: 800 });
    ctx.fact("killHow", r.how);
    const empty = await ctx.waitFor("the scope to empty", () => cgroupProcs(dir).length === 0, 10_000).catch(() => false);
    ctx.check("the scope is empty after the kill", empty === true, cgroupProcs(dir));
    ctx.check("no escapee survives anywhere", !before.some(isRunning), before.filter(isRunning));
    const done = await ctx.completion(d, "escaper");
    ctx.check("the task ends killed", done.state === "killed", done);
    ctx.check("its scope unit is gone", (await ctx.units()).length === 0, await ctx.units());
    await d.stop("disable");
  },
});
export default scenario;
runIfMain(import.meta.url, scenario.name);
