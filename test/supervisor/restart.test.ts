import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ModuleProcess } from "../../harness/inside/module/module-client.ts";
import { CgroupV2Placement } from "../../lib/internal.ts";
import { removePlacementBase } from "../support/cgroup-base.ts";
import { PidNamespace, pidNamespaceUnavailable } from "../support/pid-namespace.ts";
import { exitCodeWritten, waitFor } from "../support/wait.ts";

// The prefix names this run's base cgroup: two runs of the file side by side (CI runs Node 22 and 24 at once)
// each remove only their own.
const PREFIX = `outlive-test-restart-${process.pid}`;
const cgroupProbe = await new CgroupV2Placement({ prefix: PREFIX }).probe();
const placements = ["process-group", ...(cgroupProbe.ok ? ["cgroup-v2"] : [])];
if (!cgroupProbe.ok) console.log(`restart test: cgroup-v2 variant skipped: ${cgroupProbe.reason}`);
const noReuse = pidNamespaceUnavailable();
if (noReuse) console.log(`restart test skipped: ${noReuse}`);

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const f of cleanups) await f();
  // The base cgroup the test's prefix made on the host; removed once its task cgroups are gone.
  // The placement removes it itself with its last task; only what is still there is removed here.
  await removePlacementBase(cgroupProbe.ok ? String(cgroupProbe.details.baseDir) : null);
});

describe.skipIf(noReuse !== null).each(placements)("a supervisor SIGKILLed and replayed (%s)", (placement) => {
  it("adopts the running, reports the finished, kills with EXIT traps, never touches a reused pid", async () => {
    const storage = mkdtempSync(join(tmpdir(), "outlive-restart-"));
    // Removed in afterAll even when an assertion fails.
    cleanups.push(() => rmSync(storage, { recursive: true, force: true }));
    const trapFile = join(storage, "trap-ran");
    // Both supervisors, their tasks and the stranger live in a pid namespace of the test's own: its pids are
    // the ones below, only this test forks there (so the stranger gets the victim's pid at the first try), and
    // its PID 1 reaps the victim however the suite's own PID 1 behaves. Closing it ends all of them.
    const ns = await PidNamespace.start();
    cleanups.push(() => ns.close());
    const launch = { storage, placement, prefix: PREFIX, livenessMs: 100, wrap: ns.wrap };
    const first = await ModuleProcess.start(launch);
    cleanups.push(() => first.child.kill("SIGKILL"));
    expect(first.ready.placement).toBe(placement);

    const run = async (spec: object) => (await first.request("run", { spec })).task;
    const running = await run({ id: "still-running", argv: ["sleep", "30"] });
    const finishes = await run({ id: "finishes-while-down", shell: "echo working; sleep 1; echo done; exit 7" });
    const trapped = await run({ id: "exit-trap", argv: ["bash", "-c", `trap 'echo cleaned > ${trapFile}' EXIT; echo armed; sleep 30`] });
    const reused = await run({ id: "pid-reused", argv: ["sleep", "30"] });
    for (const t of [running, finishes, trapped, reused]) expect(t.state).toBe("running");

    // SIGKILL the module itself: its parent here is nsenter, which then exits with it.
    ns.kill(first.ready.pid, "SIGKILL");
    await first.exited;
    // The pid-reuse victim dies with no one to record it, and its pid goes to an unrelated process.
    ns.kill(-reused.pgid, "SIGKILL");
    const stranger = { pid: await ns.spawnWithPid(reused.pid) };
    await waitFor("finishes-while-down to finish with no supervisor", () => exitCodeWritten(storage, "finishes-while-down"));

    const second = await ModuleProcess.start(launch);
    cleanups.push(() => second.child.kill("SIGKILL"));
    const replay = second.ready.replay;
    expect(replay.adopted.sort()).toEqual(["exit-trap", "still-running"]);
    const finished = Object.fromEntries(replay.finished.map((f: { id: string }) => [f.id, f]));
    expect(finished["finishes-while-down"]).toMatchObject({ state: "exited", exitCode: 7 });
    expect(finished["pid-reused"].state).toBe("lost");
    expect(finished["pid-reused"].reason).toContain("pid reused");
    expect(finished["pid-reused"].reason).not.toContain("fate unknown");
    expect(ns.exists(stranger.pid)).toBe(true);

    const killedTrap = await second.request("kill", { id: "exit-trap", graceMs: 2000 });
    expect(killedTrap.how).toBe("term");
    expect(killedTrap.task.state).toBe("killed");
    expect(readFileSync(trapFile, "utf8")).toBe("cleaned\n");
    const killedSleep = await second.request("kill", { id: "still-running", graceMs: 2000 });
    expect(killedSleep.task.state).toBe("killed");
    expect(/\(sleep\) [^Z]/.test(ns.stat(running.pid) ?? "")).toBe(false);

    // Every task's completion reaches the owner exactly once.
    await second.nextEvent((m) => m.event === "completion" && m.task.id === "still-running");
    const delivered = second.completions().map((t) => t.id).sort();
    expect(delivered).toEqual(["exit-trap", "finishes-while-down", "pid-reused", "still-running"]);
    const out = (await second.request("list")).tasks.find((t: { id: string }) => t.id === "finishes-while-down");
    expect(out.outputTail).toBe("working\ndone\n");

    // Stranger untouched by everything above.
    expect(ns.exists(stranger.pid)).toBe(true);
    await second.drain("disable");
    rmSync(storage, { recursive: true, force: true });
  });
});

