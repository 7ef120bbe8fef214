import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CgroupV2Placement, isRunning, Supervisor, type SupervisorOptions, type TaskRecord, writeFileAtomic } from "../../lib/internal.ts";
import { removePlacementBase } from "../support/cgroup-base.ts";

const PREFIX = `cut${process.pid}`;
const cgroupProbe = await new CgroupV2Placement({ prefix: PREFIX }).probe();
if (!cgroupProbe.ok) console.log(`cut-short spawn: cgroup-v2 variant skipped: ${cgroupProbe.reason}`);
afterAll(() => removePlacementBase(cgroupProbe.ok ? (cgroupProbe.details.baseDir as string | undefined) : null));


/**
 * Runs `sleep 30` as task "cut-short", closes, rewrites its record as a
 * supervisor killed between spawning the task and recording its pid left it,
 * and opens the next supervisor on the same storage.
 */
async function cutShortAndReopen(options: SupervisorOptions): Promise<{ task: TaskRecord; second: Supervisor }> {
  const first = await Supervisor.open(options);
  const task = await first.run({ id: "cut-short", argv: ["sleep", "30"] });
  await first.close();
  const { commandPid: _, ...rest } = task;
  const starting: TaskRecord = { ...rest, state: "starting", pid: null, pgid: null, startTime: null, startedAt: null, location: {} };
  await writeFileAtomic(join(first.store.root, "tasks", task.id, "record.json"), `${JSON.stringify(starting)}\n`);
  return { task, second: await Supervisor.open(options) };
}

describe("a spawn cut short before the pid was recorded", () => {
  it.skipIf(!cgroupProbe.ok)("is found in its own cgroup by id and adopted, not reported lost and stopped (cgroup-v2)", async () => {
    const storage = mkdtempSync(join(tmpdir(), "outlive-cut-"));
    const options = { storage, placement: "cgroup-v2" as const, mode: "daemon" as const, prefix: PREFIX, log: () => {} };
    const { task, second } = await cutShortAndReopen(options);
    try {
      expect(second.replayReport.adopted).toContain("cut-short");
      const adopted = second.get("cut-short");
      expect(adopted).toMatchObject({ state: "running", pid: task.pid, startTime: task.startTime });
      expect(adopted.location.cgroupDir).toBe(task.location.cgroupDir);
      const onDisk = JSON.parse(readFileSync(join(storage, "tasks", "cut-short", "record.json"), "utf8"));
      expect(onDisk.pid).toBe(task.pid);
      // The wrapper wrote the command's pid before the record could: the adopted record has it again.
      expect(task.commandPid).toBeGreaterThan(0);
      expect(adopted.commandPid).toBe(task.commandPid);
      expect(onDisk.commandPid).toBe(task.commandPid);
      expect(readFileSync(`/proc/${task.commandPid}/cmdline`, "utf8").split("\0")[0]).toBe("sleep");
      const { record } = await second.kill("cut-short");
      expect(record.state).toBe("killed");
      expect(isRunning(task.pid!)).toBe(false);
    } finally {
      await second.close();
      rmSync(storage, { recursive: true, force: true });
    }
  });

  it("in a plain process group it cannot be found, and says the spawn did not complete", async () => {
    const storage = mkdtempSync(join(tmpdir(), "outlive-cut-"));
    const options = { storage, placement: "process-group" as const, log: () => {} };
    const { task, second } = await cutShortAndReopen(options);
    try {
      const finished = second.replayReport.finished.find((f) => f.id === "cut-short");
      expect(finished).toMatchObject({ state: "lost" });
      expect(finished?.reason).toContain("spawn did not complete");
    } finally {
      await second.close();
      process.kill(-task.pgid!, "SIGKILL");
      rmSync(storage, { recursive: true, force: true });
    }
  });
});

const MOD = join(import.meta.dirname, "..", "..", "dist", "lib", "mod.js");

/**
 * A supervisor in a process of its own, SIGKILLed at `step` of the spawn of
 * task "cut" (its `onStep` kills it there, so the moment is exact), as a
 * daemon's restart would end it; then the next supervisor opens the storage.
 */
async function killedAt(step: string, storage: string, placement: string): Promise<Supervisor> {
  const source = `
    const { Supervisor } = await import(${JSON.stringify(MOD)});
    const sup = await Supervisor.open({ storage: ${JSON.stringify(storage)}, placement: ${JSON.stringify(placement)}, control: false,
      onStep: (id, step) => { if (step === ${JSON.stringify(step)}) process.kill(process.pid, "SIGKILL"); } });
    await sup.run({ id: "cut", argv: ["sh", "-c", "echo ran; sleep 30"] });
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", source], { stdio: "ignore" });
  const [, signal] = await once(child, "exit");
  expect(signal).toBe("SIGKILL");
  return await Supervisor.open({ storage, placement: placement as "process-group", control: false, log: () => {} });
}

describe("a supervisor killed at a step of a spawn", () => {
  for (const step of ["recorded", "planned"]) {
    it(`at ${step}: nothing of the command ran, so the next supervisor says never_started, with the time run was asked`, async () => {
      const storage = mkdtempSync(join(tmpdir(), "outlive-cut-step-"));
      const second = await killedAt(step, storage, "process-group");
      try {
        const done = second.get("cut");
        expect(done.state).toBe("never_started");
        expect(done.exitCode).toBeNull();
        expect(done.reason).toContain(`before its command ran (requested at ${done.createdAt}`);
        expect(done.schemaVersion).toBe(2);
        // Stored so, not only decided: a third look reads the same.
        const onDisk = JSON.parse(readFileSync(join(storage, "tasks", "cut", "record.json"), "utf8"));
        expect(onDisk).toMatchObject({ state: "never_started", schemaVersion: 2 });
      } finally {
        await second.close();
        rmSync(storage, { recursive: true, force: true });
      }
    });
  }

  it("at forked, in a process group: the wrapper ran on, so its command started; lost (not findable), never never_started", async () => {
    const storage = mkdtempSync(join(tmpdir(), "outlive-cut-step-"));
    // The wrapper has its own session: the supervisor's SIGKILL does not reach it, and it writes the command's pid.
    const second = await killedAt("forked", storage, "process-group");
    const commandPid = join(storage, "tasks", "cut", "io", "command-pid");
    try {
      const done = second.get("cut");
      expect(done.state).toBe("lost");
      expect(done.reason).toContain("spawn did not complete");
    } finally {
      await second.close();
      const pid = Number(readFileSync(commandPid, "utf8"));
      if (pid > 0) process.kill(-Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")[2]), "SIGKILL");
      rmSync(storage, { recursive: true, force: true });
    }
  });
});
