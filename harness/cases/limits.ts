/**
 * limits: a task's CPU (`cpuCores`) and process (`pidsMax`) limits under
 * both placements that can hold them, `systemd-scope` (CPUQuota= and
 * TasksMax= on the scope) and `cgroup-v2` (outlive enables the cpu and pids
 * controllers down its delegated subtree and writes cpu.max and pids.max).
 * Where cgroup v2 has both controllers (a vm guest's own kernel): the
 * limits sit in the task's cgroup as the kernel holds them; a busy loop is
 * throttled and its record says how much (cpu.stat); a shell that forks
 * past its limit sees its fork fail (EAGAIN), nothing is killed, and its
 * record counts the refused forks (pids.events). Where a controller is
 * missing (a hybrid host, whose kernel binds cpu and pids to cgroup v1), a
 * run that asks for them is refused with the reason and nothing is stored.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { cgroupControllers, findCgroup2Mount } from "../../lib/internal.ts";
import { defineScenario } from "../inside/define-scenario.ts";
import type { ScenarioContext } from "../inside/context.ts";
import { runIfMain } from "../inside/run-if-main.ts";
import { cgroupFile } from "../inside/cgroup-file.ts";
import { timeScaleOf } from "../shared/time-scale.ts";

const PLACEMENTS = ["systemd-scope", "cgroup-v2"] as const;
/** One second of one core's work, however long the wall clock takes to give it (under TCG at 0.2 cores, some 25 s). */
const BUSY = "let n = 0; const end = process.cpuUsage().user + 1e6; while (process.cpuUsage().user < end) n++;";

const scenario = defineScenario({
  name: "limits",
  summary: "a task's cpu and pids limits hold (throttled, forks refused, nothing killed, the record counts both) where cgroup v2 has the controllers, and are refused with the reason where it has not",
  timeoutMs: 240_000,
  async inside(ctx) {
    const mount = findCgroup2Mount()!;
    const uid = process.getuid!();
    const userManager = join(mount, `user.slice/user-${uid}.slice/user@${uid}.service`);
    const have = { root: cgroupControllers(mount), userManager: cgroupControllers(userManager), delegated: cgroupControllers(ctx.cgroup.dir) };
    ctx.fact("controllers", have);
    const scale = timeScaleOf(ctx.params);
    const enforced = ["cpu", "pids"].every((c) => have.root.includes(c) && have.userManager.includes(c));
    ctx.fact("enforced", enforced);
    for (const placement of PLACEMENTS) {
      if (enforced) await limitsHold(ctx, placement, scale);
      else await limitsRefused(ctx, placement);
    }
  },
});

async function limitsHold(ctx: ScenarioContext, placement: (typeof PLACEMENTS)[number], scale: number): Promise<void> {
  const d = ctx.daemon({ name: placement, placement, storage: ctx.storageFor(placement) });
  const mod = await d.start();
  ctx.check(`${placement}: the module places tasks with it`, mod.ready.placement === placement, mod.ready.reason);

  const held = await d.run({ id: "held", cpuCores: 0.5, pidsMax: 8, argv: ["sleep", "300"] });
  const dir: string = held.location.cgroupDir;
  ctx.check(`${placement}: cpu.max is half a core`, cgroupFile(dir, "cpu.max") === "50000 100000", cgroupFile(dir, "cpu.max"));
  ctx.check(`${placement}: pids.max is 8`, cgroupFile(dir, "pids.max") === "8", cgroupFile(dir, "pids.max"));
  if (placement === "systemd-scope") {
    const shown = spawnSync("systemctl", ["--user", "show", held.location.unit, "-p", "CPUQuotaPerSecUSec", "-p", "TasksMax"], { encoding: "utf8" }).stdout;
    ctx.check("systemd-scope: the scope carries CPUQuota=50% and TasksMax=8", shown.includes("CPUQuotaPerSecUSec=500ms\n") && shown.includes("TasksMax=8\n"), shown);
  }
  await mod.request("kill", { id: "held", graceMs: 1000 });
  await ctx.completion(d, "held", 20_000 * scale);

  const busy = await d.run({ id: "busy", cpuCores: 0.2, argv: ["node", "-e", BUSY] });
  const spun = await ctx.completion(d, busy.id, 90_000 * scale);
  ctx.fact(`${placement}.busy`, { durationMs: spun.durationMs, limitEvents: spun.limitEvents });
  ctx.check(`${placement}: a busy loop at 0.2 cores exits normally`, spun.state === "exited" && spun.exitCode === 0, spun);
  ctx.check(`${placement}: its record says it was throttled (cpu.stat nr_throttled, throttled_usec)`,
    spun.limitEvents?.cpuThrottledPeriods > 0 && spun.limitEvents?.cpuThrottledUsec > 0 && spun.limitEvents?.forksRefused === null, spun.limitEvents);

  // dash gives up at the first fork the kernel refuses: "Cannot fork", exit 2. Nothing of outlive's kills it.
  const forks = await d.run({ id: "forks", pidsMax: 6, shellPath: "/bin/sh", shell: "i=0; while [ $i -lt 20 ]; do sleep 3 & i=$((i+1)); done; wait" });
  const forked = await ctx.completion(d, forks.id, 60_000 * scale);
  ctx.fact(`${placement}.forks`, { state: forked.state, exitCode: forked.exitCode, limitEvents: forked.limitEvents, tail: forked.outputTail });
  ctx.check(`${placement}: a shell forking past its pids limit sees the fork fail and exits by itself, not killed`,
    forked.state === "exited" && forked.exitCode !== 0 && forked.killStartedAt === null && /fork/i.test(forked.outputTail ?? ""), forked);
  ctx.check(`${placement}: its record counts the refused forks (pids.events max)`, forked.limitEvents?.forksRefused >= 1 && forked.limitEvents?.cpuThrottledPeriods === null, forked.limitEvents);
  await d.stop("disable");
}

async function limitsRefused(ctx: ScenarioContext, placement: (typeof PLACEMENTS)[number]): Promise<void> {
  const storage = ctx.storageFor(placement);
  const d = ctx.daemon({ name: placement, placement, storage });
  await d.start();
  const tasks = () => (existsSync(join(storage, "tasks")) ? readdirSync(join(storage, "tasks")).length : 0);
  const before = tasks();
  for (const [limit, controller] of [[{ cpuCores: 0.5 }, "cpu"], [{ pidsMax: 8 }, "pids"]] as const) {
    const error = await d.run({ ...limit, argv: ["sleep", "1"] }).then(() => null, (e: Error & { code?: string }) => e);
    ctx.check(`${placement}: a run asking for the ${controller} limit is refused with E_LIMIT_UNSUPPORTED`, error?.code === "E_LIMIT_UNSUPPORTED", error?.message);
    ctx.check(`${placement}: the reason names the missing ${controller} controller`, new RegExp(`the ${controller} controller is not available`).test(error?.message ?? ""), error?.message);
  }
  ctx.check(`${placement}: nothing was stored for the refused runs`, tasks() === before, { before, after: tasks() });
  await d.stop("disable");
}

export default scenario;
runIfMain(import.meta.url, scenario.name);
