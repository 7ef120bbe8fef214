import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, expect, test } from "vitest";
import { CgroupV2Placement, Supervisor, TASK_STEPS, type TaskStep } from "../../lib/internal.ts";
import { removePlacementBase } from "../support/cgroup-base.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Until `ok` holds (the `ended` step follows the write, which a `wait` may beat), within 5 s. */
async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
}

function storage(): string {
  const dir = mkdtempSync(join(tmpdir(), "outlive-on-step-"));
  dirs.push(dir);
  return dir;
}

const cgroupProbe = await new CgroupV2Placement({ prefix: `onstep${process.pid}` }).probe();
if (!cgroupProbe.ok) console.log(`onStep: the spawner's variant skipped: ${cgroupProbe.reason}`);
afterAll(() => removePlacementBase(cgroupProbe.ok ? (cgroupProbe.details.baseDir as string | undefined) : null));

/** The steps a task this supervisor starts goes through: `sent` only where a spawner forks it. */
const stepsFor = (spawner: boolean) => TASK_STEPS.filter((s) => spawner || s !== "sent");

for (const variant of [
  { name: "forked here (process-group)", options: { placement: "process-group" as const }, spawner: false },
  { name: "forked by the spawner (cgroup-v2)", options: { placement: "cgroup-v2" as const, prefix: `onstep${process.pid}` }, spawner: true },
]) {
  test.skipIf(variant.spawner && !cgroupProbe.ok)(`onStep hears every step of a real task, in order, each no earlier than the one before: ${variant.name}`, async () => {
    const heard: Array<{ id: string; step: TaskStep; at: number }> = [];
    const sup = await Supervisor.open({ storage: storage(), control: false, ...variant.options, onStep: (id, step, at) => heard.push({ id, step, at }) });
    try {
      const t0 = performance.now();
      const task = await sup.run({ shell: "exit 3" });
      const atReturn = performance.now();
      // Every step of the start was heard before `run` returned; a task that ends at once may be decided meanwhile.
      const beforeReturn = heard.map((h) => h.step).filter((s) => s !== "decided");
      const steps = stepsFor(variant.spawner);
      expect(beforeReturn).toEqual(steps.slice(0, steps.indexOf("running") + 1));
      const done = await sup.wait(task.id);
      expect(done.exitCode).toBe(3);
      await until(() => heard.some((h) => h.step === "ended"));
      const mine = heard.filter((h) => h.id === task.id);
      expect(mine.map((h) => h.step).sort()).toEqual([...steps].sort());
      expect(mine.at(-1)!.step).toBe("ended");
      expect(mine[0].at).toBeGreaterThanOrEqual(t0);
      for (let i = 1; i < mine.length; i++) expect(mine[i].at).toBeGreaterThanOrEqual(mine[i - 1].at);
      expect(mine.find((h) => h.step === "running")!.at).toBeLessThanOrEqual(atReturn);
    } finally {
      await sup.close();
    }
  });
}

test("a listener that throws is logged and stops neither the start nor the end", async () => {
  const lines: string[] = [];
  const sup = await Supervisor.open({
    storage: storage(),
    control: false,
    log: (line) => lines.push(line),
    onStep: (_id, step) => {
      if (step === "forked" || step === "ended") throw new Error(`no ${step}`);
    },
  });
  try {
    const task = await sup.run({ argv: ["true"] });
    const done = await sup.wait(task.id);
    expect(done.state).toBe("exited");
    await until(() => lines.filter((l) => l.startsWith("onStep threw")).length >= 2);
    expect(lines.filter((l) => l.startsWith("onStep threw"))).toEqual([
      `onStep threw at forked of ${task.id}: no forked`,
      `onStep threw at ended of ${task.id}: no ended`,
    ]);
  } finally {
    await sup.close();
  }
});

test("onStep that is not a function is refused at the door, naming it", async () => {
  await expect(Supervisor.open({ storage: storage(), onStep: "yes" as never })).rejects.toThrow(
    'Expected the `onStep` option to be a function, got `"yes"` (string)',
  );
});
