/**
 * memory-cap: where the memory controller is available in cgroup v2 (and
 * delegated to the user manager), a task over its cap ends `oom_killed`,
 * under both placements that can cap: `systemd-scope` (MemoryMax,
 * MemorySwapMax=0 and OOMPolicy=kill on the scope) and `cgroup-v2` (outlive
 * enables the memory controller down its delegated subtree and writes
 * memory.max, memory.swap.max and memory.oom.group itself). Each cap sits in
 * the task's cgroup, the whole task group dies, and the count comes from
 * memory.events. Elsewhere — e.g. a hybrid host whose kernel binds memory to
 * cgroup v1, which no container on it can change — it skips with the reason.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { cgroupControllers, findCgroup2Mount, isRunning } from "../../lib/internal.ts";
import { defineScenario } from "../inside/define-scenario.ts";
import type { ScenarioContext } from "../inside/context.ts";
import { runIfMain } from "../inside/run-if-main.ts";
import { cgroupFile } from "../inside/cgroup-file.ts";
import { timeScaleOf } from "../shared/time-scale.ts";

const CAP = 64 * 1024 * 1024;
const PLACEMENTS = ["systemd-scope", "cgroup-v2"] as const;
/** Takes memory a MiB at a time until the kernel stops it. */
const HOG = "const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1));";

const scenario = defineScenario({
  name: "memory-cap",
  summary: "a task over its memory cap ends oom_killed, in a systemd scope and in outlive's own cgroup (where cgroup v2 has the memory controller)",
  timeoutMs: 180_000,
  async inside(ctx) {
    const mount = findCgroup2Mount()!;
    const rootControllers = cgroupControllers(mount);
    const userManager = join(mount, `user.slice/user-${process.getuid!()}.slice/user@${process.getuid!()}.service`);
    ctx.fact("controllers", { root: rootControllers, userManager: cgroupControllers(userManager), delegated: cgroupControllers(ctx.cgroup.dir) });
    if (!rootControllers.includes("memory")) {
      ctx.skip(`the memory controller is not in cgroup v2 here (${mount}/cgroup.controllers: "${rootControllers.join(" ")}"): the host kernel has it bound to cgroup v1 (hybrid layout), and a container cannot move it`);
    }
    if (!cgroupControllers(userManager).includes("memory")) {
      ctx.skip(`cgroup v2 has the memory controller, but it is not delegated to the user manager (${userManager}/cgroup.controllers)`);
    }
    const scale = timeScaleOf(ctx.params);
    for (const placement of PLACEMENTS) await capUnder(ctx, placement, scale);
  },
});

async function capUnder(ctx: ScenarioContext, placement: (typeof PLACEMENTS)[number], scale: number): Promise<void> {
  const storage = ctx.storageFor(placement);
  const d = ctx.daemon({ name: placement, placement, storage });
  const mod = await d.start();
  ctx.check(`${placement}: the module places tasks with it`, mod.ready.placement === placement, mod.ready.reason);

  // A capped task that stays: its cgroup shows the limits as the kernel holds them.
  const capped = await d.run({ id: "capped", memoryMaxBytes: CAP, argv: ["sleep", "300"] });
  const dir: string = capped.location.cgroupDir;
  ctx.fact(`${placement}.cgroup`, dir);
  ctx.check(`${placement}: memory.max is the cap`, cgroupFile(dir, "memory.max") === String(CAP), cgroupFile(dir, "memory.max"));
  ctx.check(`${placement}: memory.swap.max is 0 (no swapping instead of the kill)`, cgroupFile(dir, "memory.swap.max") === "0", cgroupFile(dir, "memory.swap.max"));
  ctx.check(`${placement}: memory.oom.group is 1 (one OOM kill ends the whole task)`, cgroupFile(dir, "memory.oom.group") === "1", cgroupFile(dir, "memory.oom.group"));
  if (placement === "systemd-scope") {
    const shown = spawnSync("systemctl", ["--user", "show", capped.location.unit, "-p", "MemoryMax", "-p", "MemorySwapMax", "-p", "OOMPolicy"], { encoding: "utf8" }).stdout;
    ctx.check("systemd-scope: the scope carries MemoryMax, MemorySwapMax=0 and OOMPolicy=kill", shown.includes(`MemoryMax=${CAP}\n`) && shown.includes("MemorySwapMax=0\n") && shown.includes("OOMPolicy=kill\n"), shown);
  } else {
    // Nothing but outlive turned the controller on below the driver's delegated cgroup: the driver never writes subtree_control.
    const enabled = [dirname(dirname(dir)), dirname(dir)].map((c) => ({ cgroup: c, subtreeControl: cgroupFile(c, "cgroup.subtree_control") }));
    ctx.check("cgroup-v2: outlive enabled the memory controller down its delegated subtree", enabled.every((e) => e.subtreeControl.split(/\s+/).includes("memory")), enabled);
  }
  await mod.request("kill", { id: "capped", graceMs: 1000 });
  await ctx.completion(d, "capped", 20_000 * scale);

  // The hog has a sibling in its group; memory.oom.group must take it too, not only the process that ran over.
  const siblingFile = join(storage, `${placement}-sibling.pid`);
  await d.run({ id: "hog", memoryMaxBytes: CAP, shell: `sleep 300 & echo $! > ${siblingFile}; exec node -e '${HOG}'` });
  const fits = await d.run({ id: "fits", memoryMaxBytes: CAP, shell: "echo small; exit 0" });
  const hog = await ctx.completion(d, "hog", 30_000 * scale);
  ctx.check(`${placement}: the hog ended oom_killed`, hog.state === "oom_killed", hog);
  // outlive reads memory.events before it removes its own cgroup; systemd may remove a scope's first (seen on 252
  // about one run in three), and then systemd's Result=oom-kill is the placement's word: the reason says which.
  const evidence = placement === "cgroup-v2" ? /oom_kill [1-9]\d* in memory\.events/ : /oom_kill [1-9]\d* in memory\.events|systemd's Result=oom-kill/;
  ctx.fact(`${placement}.oomEvidence`, /in memory\.events/.test(hog.reason ?? "") ? "memory.events" : "systemd Result=oom-kill");
  ctx.check(`${placement}: its reason gives the OOM kill's evidence (${placement === "cgroup-v2" ? "the count from memory.events" : "memory.events, or systemd's Result=oom-kill once the scope is gone"})`, evidence.test(hog.reason ?? ""), hog.reason);
  const sibling = Number(readFileSync(siblingFile, "utf8"));
  const siblingGone = await ctx.waitFor(`the hog's sibling ${sibling} to be gone`, () => !isRunning(sibling), 5_000 * scale).then(() => true, () => false);
  ctx.check(`${placement}: the hog's sibling died with it (the whole task group)`, siblingGone, { sibling });
  const small = await ctx.completion(d, fits.id, 20_000 * scale);
  ctx.check(`${placement}: a task under its cap exits normally`, small.state === "exited" && small.exitCode === 0, small);
  await d.stop("disable");
}

export default scenario;
runIfMain(import.meta.url, scenario.name);
