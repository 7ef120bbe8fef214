// The spawner on Deno 2: a supervisor running on Deno starts its spawner with
// Deno (the sources, no build), which forks a task in its own cgroup; a
// supervisor SIGKILLed right after handing the spawn over leaves the task
// running, adopted by the next one. Skips with the reason where cgroup-v2
// cannot work here (not root, no writable cgroup v2).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CgroupV2Placement } from "../../lib/placement/cgroup-v2/cgroup-v2.ts";
import { Supervisor } from "../../lib/supervisor/supervisor.ts";
import { removePlacementBase } from "../support/cgroup-base.ts";
import { waitFor } from "../support/wait.ts";

const PREFIX = `dnspw${process.pid}`;
const probe = await new CgroupV2Placement({ prefix: PREFIX }).probe();
if (!probe.ok) console.log(`spawner on Deno skipped: ${probe.reason}`);
const options = { placement: "cgroup-v2" as const, prefix: PREFIX, mode: "daemon" as const, control: false };
const MOD = new URL("../../lib/mod.ts", import.meta.url).href;

/** Waits for the placement's own removal of each task cgroup, then the base (see removePlacementBase). */
const cleanBase = () => removePlacementBase(probe.details.baseDir as string | undefined);

Deno.test({ name: "a Deno supervisor's spawner is Deno running the sources, and forks into the task's cgroup", ignore: !probe.ok }, async () => {
  const storage = mkdtempSync(join(tmpdir(), "outlive-deno-spawner-"));
  const sup = await Supervisor.open({ storage, ...options });
  try {
    const t = await sup.run({ shell: "cat /proc/self/cgroup; echo deno-spawned" });
    const done = await sup.wait(t.id);
    assert.equal(done.exitCode, 0);
    const out = readFileSync(join(storage, "tasks", t.id, "io", "stdout"), "utf8");
    assert.ok(out.includes(`0::${done.location.cgroup}\n`), out);
    const { pid } = JSON.parse(readFileSync(join(storage, "spawner", "spawner.json"), "utf8"));
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    assert.equal(argv[0], Deno.execPath());
    assert.ok(argv.some((a) => a.endsWith("spawner-main.ts")), argv.join(" "));
  } finally {
    await sup.close();
    rmSync(storage, { recursive: true, force: true });
    await cleanBase();
  }
});

Deno.test({ name: "a Deno supervisor SIGKILLed once the spawn was sent: the task runs and is adopted", ignore: !probe.ok }, async () => {
  const storage = mkdtempSync(join(tmpdir(), "outlive-deno-spawner-"));
  const source = `
    const { Supervisor } = await import(${JSON.stringify(MOD)});
    const sup = await Supervisor.open({ ...${JSON.stringify({ storage, ...options })},
      onStep: (id, step) => { if (step === "sent") Deno.kill(Deno.pid, "SIGKILL"); } });
    await sup.run({ id: "cut", argv: ["sh", "-c", "echo ran; sleep 30"] });
  `;
  const file = join(storage, "first.ts");
  Deno.writeTextFileSync(file, source);
  const child = spawn(Deno.execPath(), ["run", "-A", "--quiet", `--config=${new URL("../../deno.json", import.meta.url).pathname}`, file], { stdio: "ignore" });
  const [, signal] = await once(child, "exit");
  assert.equal(signal, "SIGKILL");
  const second = await Supervisor.open({ storage, ...options });
  try {
    assert.equal(second.get("cut").state, "running");
    await waitFor("the adopted task's output", () => readFileSync(join(storage, "tasks", "cut", "io", "stdout"), "utf8") !== "");
    assert.equal(readFileSync(join(storage, "tasks", "cut", "io", "stdout"), "utf8"), "ran\n");
    assert.equal((await second.kill("cut")).record.state, "killed");
  } finally {
    await second.close();
    rmSync(storage, { recursive: true, force: true });
    await cleanBase();
  }
});
