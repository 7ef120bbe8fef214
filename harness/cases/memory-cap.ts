/**
 * memory-cap: where the memory controller is available in cgroup v2 (and
 * delegated to the user manager), a task over its MemoryMax ends
 * `oom_killed`. Elsewhere — e.g. a hybrid host whose kernel binds memory to
 * cgroup v1, which no container on it can change — it skips with the reason.
 */
import { join } from "node:path";
import { cgroupControllers, findCgroup2Mount } from "../../lib/mod.ts";
import { defineScenario } from "../shared/define.ts";
import { runIfMain } from "../inside/run-if-main.ts";

const scenario = defineScenario({
  name: "memory-cap",
  summary: "a task over its memory cap ends oom_killed (where cgroup v2 has the memory controller)",
  async inside(ctx) {
    const mount = findCgroup2Mount()!;
    const rootControllers = cgroupControllers(mount);
    const userManager = join(mount, `user.slice/user-${process.getuid!()}.slice/user@${process.getuid!()}.service`);
    ctx.fact("controllers", { root: rootControllers, userManager: cgroupControllers(userManager) });
    if (!rootControllers.includes("memory")) {
      ctx.skip(`the memory controller is not in cgroup v2 here (${mount}/cgroup.controllers: "${rootControllers.join(" ")}"): the host kernel has it bound to cgroup v1 (hybrid layout), and a container cannot move it`);
    }
    if (!cgroupControllers(userManager).includes("memory")) {
      ctx.skip(`cgroup v2 has the memory controller, but it is not delegated to the user manager (${userManager}/cgroup.controllers)`);
    }
    const d = ctx.daemon();
    await d.start();
    await d.run({ id: "hog", memoryMaxBytes: 64 * 1024 * 1024, argv: ["node", "-e", "const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1));"] });
    const fits = await d.run({ id: "fits", memoryMaxBytes: 64 * 1024 * 1024, shell: "echo small; exit 0" });
    const hog = await ctx.completion(d, "hog", 30_000);
    ctx.check("the hog ended oom_killed", hog.state === "oom_killed", hog);
    ctx.check("its reason names the memory cap", /memory|oom/i.test(hog.reason ?? ""), hog.reason);
    const small = await ctx.completion(d, fits.id);
    ctx.check("a task under its cap exits normally", small.state === "exited" && small.exitCode === 0, small);
    await d.stop("disable");
  },
});
export default scenario;
runIfMain(import.meta.url, scenario.name);
