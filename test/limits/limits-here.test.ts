import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { probe, Supervisor } from "../../lib/mod.ts";
import { tempDir } from "../support/cli.ts";

// CPU and pids limits on this machine, in the cgroup-v2 placement (as root): enforced where cgroup v2 has the
// controllers, refused naming the missing one where it has not (a hybrid host); never silently ignored.
// The vm engine's `limits` scenario checks what the limits do in a kernel with every controller.
const { dir: storage, remove } = tempDir("outlive-limits-here-");
afterAll(remove);
const here = await probe();
const cgroupV2 = here.probes.find((p) => p.name === "cgroup-v2")!;
const why = process.getuid?.() !== 0 ? "not root" : !cgroupV2.ok ? `cgroup-v2 does not work here: ${cgroupV2.reason}` : null;
if (why) console.log(`test/limits/limits-here.test.ts skipped: ${why}`);

describe.skipIf(why !== null)("cpu and pids limits in the cgroup-v2 placement here", () => {
  it("probe says which controllers each placement has", () => {
    expect(cgroupV2.controllers).toEqual(expect.any(Array));
    expect(here.probes.find((p) => p.name === "process-group")!.controllers).toEqual([]);
    for (const p of here.probes) if (!p.ok) expect(p.controllers).toBeNull();
  });

  it("enforces them where the controllers are, refuses them naming the missing one where not, storing nothing then", async () => {
    const sup = await Supervisor.open({ storage, mode: "daemon", placement: "cgroup-v2", log: () => {} });
    try {
      const has = (c: string) => cgroupV2.controllers!.includes(c);
      for (const [spec, controller] of [[{ cpuCores: 0.5 }, "cpu"], [{ pidsMax: 16 }, "pids"]] as const) {
        const before = existsSync(join(storage, "tasks")) ? readdirSync(join(storage, "tasks")).length : 0;
        if (has(controller)) {
          const task = await sup.run({ ...spec, argv: ["sleep", "30"] });
          const file = controller === "cpu" ? "cpu.max" : "pids.max";
          expect(readFileSync(join(task.location.cgroupDir!, file), "utf8").trim()).toBe(controller === "cpu" ? "50000 100000" : "16");
          await sup.kill(task.id);
        } else {
          const error = await sup.run({ ...spec, argv: ["sleep", "30"] }).catch((e) => e);
          expect(error.code).toBe("E_LIMIT_UNSUPPORTED");
          expect(error.message).toMatch(new RegExp(`the ${controller} controller is not available to cgroup v2 at /sys/fs/cgroup`));
          expect(existsSync(join(storage, "tasks")) ? readdirSync(join(storage, "tasks")).length : 0).toBe(before);
        }
      }
    } finally {
      await sup.close();
    }
  });
});
