import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PREVIOUS_RELEASE } from "../support/previous-release.ts";
import { alive, countStorageOpens, programOf, spawnerHello, spawnerOf } from "../support/storage-processes.ts";
import {
  armed, endsAtOnce, endsWhenTold, exitCodeIn, ioFile, type Json, readIo, recordOf, runArgs, runsUntilKilled, tell, THIS_BUILD as NEW,
  timesOut, trapFile, TwoReleases,
} from "../support/two-releases.ts";
import { exitCodeWritten, waitFor } from "../support/wait.ts";

/*
 * Issue 33, "the same on-disk contract": a real build of the previous release
 * (443e5b2, whose tasks ran under `/bin/sh -c <wrapper>` and whose spawner
 * spoke revision 1 of its channel) beside this one (outlive-shim, spawner
 * revision 2), on one storage. Each release runs only in processes of its
 * own: its CLI, or its library in a child process.
 */
const t = await TwoReleases.make("test/compat/previous-release");
const { placements } = t;

/*
 * 1. A storage holding tasks 443e5b2 started: this build adopts the running
 * ones, reads the ones that ended while no supervisor ran, and kills.
 */
const oldEnds = [
  ["its CLI (each command exits)", "cli"],
  ["its library, drained for a restart", "drain"],
  ["its library, SIGKILLed", "sigkill"],
] as const;

describe.each(placements)(`tasks ${PREVIOUS_RELEASE} started (shell wrapper), taken over by this build (%s)`, (placement) => {
  it.for(oldEnds)("started by %s", { timeout: 180_000 }, async ([, how], ctx) => {
    const release = t.old(ctx);
    const s = t.newStorage(placement);
    const specs = [runsUntilKilled(s, "adopted"), endsWhenTold(s, "ends-unwatched", 7), endsAtOnce("ended", 4), timesOut("times-out", 8)];
    if (how === "cli") {
      for (const spec of specs) expect((await t.cliOk(release, runArgs(s, spec))).trim()).toBe(spec.id);
    } else {
      const sup = await t.startSupervisor(release, s);
      expect(sup.ready.placement).toBe(placement);
      // The quick one may have ended by the time run answers.
      for (const spec of specs) expect(["running", "exited"]).toContain((await sup.request("run", { spec })).state);
      if (how === "drain") await sup.drain("restart");
      else await sup.kill9();
    }
    // The old release's tasks run under its shell wrapper: the leader is `/bin/sh -c <wrapper>`.
    expect(programOf(recordOf(s, "adopted").pid).argv.slice(0, 2)).toEqual(["/bin/sh", "-c"]);
    await armed(s, "adopted");
    expect(recordOf(s, "ends-unwatched").state).toBe("running");
    // The deadline is still ahead: the wrapper's watchdog, not a supervisor, will end it.
    expect(recordOf(s, "times-out").state).toBe("running");
    expect(existsSync(ioFile(s, "times-out", "timed-out"))).toBe(false);

    // With no supervisor running: one task exits with its own code, another reaches its deadline.
    tell(s, "ends-unwatched");
    await waitFor("ends-unwatched to exit", () => exitCodeWritten(s.dir, "ends-unwatched"));
    await waitFor("times-out's watchdog to end it", () => exitCodeWritten(s.dir, "times-out") && existsSync(ioFile(s, "times-out", "timed-out")), 30_000);
    await waitFor("ended to exit", () => exitCodeWritten(s.dir, "ended"));

    // A daemon's supervisor (drained for a restart, or killed) leaves its spawner running for the next one.
    const oldSpawner = spawnerOf(s.dir);
    if (placement === "cgroup-v2" && how !== "cli") {
      expect(oldSpawner?.argv).toContain(join(release.root, "dist/lib/spawner/spawner-main.js"));
      expect((await spawnerHello(oldSpawner!.socket)).protocol).toBeUndefined();
    } else {
      expect(oldSpawner).toBeNull();
    }

    const replay = JSON.parse(await t.cliOk(NEW, ["replay", ...s.flags, "--json"]));
    expect(replay.report.adopted).toEqual(["adopted"]);
    // This build's command ends it at its close, as it ends its own: asked to exit, it ended.
    if (oldSpawner) await waitFor("443e5b2's spawner to end", () => !alive(oldSpawner.pid));
    const finished = Object.fromEntries(replay.report.finished.map((f: Json) => [f.id, f]));
    expect(finished["ends-unwatched"]).toMatchObject({ state: "exited", exitCode: 7 });
    // Timed out by the wrapper's watchdog: its record keeps the code the wrapper wrote (143, TERM), as for any task.
    expect(finished["times-out"]).toMatchObject({ state: "timed_out", exitCode: exitCodeIn(s, "times-out") });
    expect(finished["times-out"].reason).toContain("ended by its watchdog at its deadline");
    // A daemon drained for a restart or an exiting CLI may have recorded the quick one's end itself; else replay does.
    const tasks = await t.psAll(NEW, s);
    expect(tasks.ended).toMatchObject({ state: "exited", exitCode: 4 });
    expect(tasks.adopted).toMatchObject({ state: "running" });

    expect(await t.cli(NEW, ["logs", "--storage", s.dir, "ends-unwatched"])).toMatchObject({ code: 0, out: "under sh\ndone\n" });
    expect(await t.cli(NEW, ["logs", "--storage", s.dir, "--stderr", "ended"])).toMatchObject({ code: 0, out: "to-stderr\n" });
    expect(await t.waitCli(NEW, s, "ends-unwatched")).toMatchObject({ code: 7, record: { state: "exited", exitCode: 7 } });
    expect(await t.waitCli(NEW, s, "times-out")).toMatchObject({ code: 125, record: { state: "timed_out" } });

    await t.killAndCheck(NEW, s, "adopted");

    // A new task on the same storage runs under this build's shim, beside the old tasks' records.
    if (t.shim.path !== null) {
      expect((await t.cliOk(NEW, runArgs(s, endsAtOnce("after", 3)))).trim()).toBe("after");
      expect(await t.waitCli(NEW, s, "after")).toMatchObject({ code: 3, record: { state: "exited", exitCode: 3 } });
      expect(readIo(s, "after", "stdout")).toBe("under outlive-shim\n");
    }
    await t.endStorage(s);
  });
});

/*
 * 2. A storage this build wrote, its tasks under outlive-shim: 443e5b2 reads
 * and ends them right. (Its census, and its check of a spawn cut short before
 * the pid was recorded, do not know the shim's argv; neither is tested here.)
 */
describe.each(placements)(`tasks this build started (outlive-shim), read by ${PREVIOUS_RELEASE} (%s)`, (placement) => {
  it("ps, wait with the exit code, logs, kill and replay of running and ended tasks", async (ctx) => {
    const release = t.old(ctx);
    const shim = t.needShim(ctx);
    const s = t.newStorage(placement);
    const specs = [
      runsUntilKilled(s, "running"),
      endsWhenTold(s, "ends-unwatched", 6),
      endsWhenTold(s, "ends-watched", 9),
      endsAtOnce("ended", 5),
    ];
    for (const spec of specs) expect((await t.cliOk(NEW, runArgs(s, spec))).trim()).toBe(spec.id);
    // They run under the shim: the leader is `outlive-shim ID`.
    for (const id of ["running", "ends-unwatched", "ends-watched"]) expect(programOf(recordOf(s, id).pid)).toEqual({ exe: shim, argv: ["outlive-shim", id] });
    await armed(s, "running");
    await waitFor("ended to exit", () => exitCodeWritten(s.dir, "ended"));
    tell(s, "ends-unwatched");
    await waitFor("ends-unwatched to exit", () => exitCodeWritten(s.dir, "ends-unwatched"));
    expect(recordOf(s, "ends-unwatched").state).toBe("running");

    // 443e5b2's replay: the running shim tasks adopted, the ended ones read with their own codes.
    const replay = JSON.parse(await t.cliOk(release, ["replay", ...s.flags, "--json"]));
    expect(replay.report.adopted).toEqual(expect.arrayContaining(["ends-watched", "running"]));
    expect(replay.report.adopted).not.toContain("ends-unwatched");
    const finished = Object.fromEntries(replay.report.finished.map((f: Json) => [f.id, f]));
    expect(finished["ends-unwatched"]).toMatchObject({ state: "exited", exitCode: 6 });
    const tasks = await t.psAll(release, s);
    expect(tasks.ended).toMatchObject({ state: "exited", exitCode: 5 });
    expect(tasks.running).toMatchObject({ state: "running", commandPid: Number(readIo(s, "running", "command-pid").trim()) });

    expect(await t.cli(release, ["logs", "--storage", s.dir, "ended"])).toMatchObject({ code: 0, out: "under outlive-shim\n" });
    expect(await t.cli(release, ["logs", "--storage", s.dir, "--stderr", "ended"])).toMatchObject({ code: 0, out: "to-stderr\n" });
    expect(await t.cli(release, ["logs", "--storage", s.dir, "ends-unwatched"])).toMatchObject({ code: 0, out: "under outlive-shim\ndone\n" });
    expect(await t.waitCli(release, s, "ended")).toMatchObject({ code: 5, record: { state: "exited", exitCode: 5 } });

    // A wait of 443e5b2's under way while a shim task ends returns its code.
    const opens = countStorageOpens(s.dir);
    const watched = t.waitCli(release, s, "ends-watched");
    try {
      await waitFor("443e5b2's wait to have looked at the task once", () => opens.count() >= 1);
    } finally {
      opens.close();
    }
    expect(recordOf(s, "ends-watched").state).toBe("running");
    tell(s, "ends-watched");
    expect(await watched).toMatchObject({ code: 9, record: { state: "exited", exitCode: 9 } });
    expect(await t.cli(release, ["logs", "--storage", s.dir, "ends-watched"])).toMatchObject({ code: 0, out: "under outlive-shim\ndone\n" });

    // The shim's deadline, read by 443e5b2 as its own wrapper's: timed_out, with the code the shim wrote. Started
    // only now, with no command of 443e5b2's running: its `wait` above holds a supervisor, which watches the
    // storage's live tasks, for as long as it waits; one still open at the deadline (slow on a loaded machine)
    // ended the task itself first, with 443e5b2's kill, which leaves no watchdog's marker (a loaded run of the suite).
    expect((await t.cliOk(NEW, runArgs(s, timesOut("times-out", 6)))).trim()).toBe("times-out");
    expect(programOf(recordOf(s, "times-out").pid)).toEqual({ exe: shim, argv: ["outlive-shim", "times-out"] });
    await waitFor("times-out to reach its deadline", () => exitCodeWritten(s.dir, "times-out") && existsSync(ioFile(s, "times-out", "timed-out")), 30_000);
    const timedOut = await t.waitCli(release, s, "times-out");
    expect(timedOut).toMatchObject({ code: 125, record: { state: "timed_out", exitCode: exitCodeIn(s, "times-out") } });
    expect(timedOut.record.reason).toContain("ended by its watchdog at its deadline");

    await t.killAndCheck(release, s, "running");
    await t.endStorage(s);
  }, 180_000);
});

/*
 * 3. A spawner of 443e5b2 still running when this build first needs one: an
 * old daemon's supervisor left it (drained for a restart, or killed), with
 * cgroup-v2. It answers `hello` without a revision: this build ends it and
 * starts its own, which hands the shim its settings (on stdin), so the task
 * runs under the shim instead of being refused (exit 125).
 */
describe.skipIf(t.noCgroup !== null)(`a spawner of ${PREVIOUS_RELEASE} still running, met by this build (cgroup-v2)`, () => {
  it.for([
    ["drained for a restart, then this build's library", "drain"],
    ["SIGKILLed, then this build's CLI", "sigkill"],
  ] as const)("its supervisor %s", { timeout: 180_000 }, async ([, how], ctx) => {
    const release = t.old(ctx);
    const shim = t.needShim(ctx);
    const s = t.newStorage("cgroup-v2");
    const before = await t.startSupervisor(release, s);
    expect((await before.request("run", { spec: runsUntilKilled(s, "old-task") })).state).toBe("running");
    if (how === "drain") await before.drain("restart");
    else await before.kill9();
    await armed(s, "old-task");
    const oldSpawner = spawnerOf(s.dir);
    expect(oldSpawner?.argv).toContain(join(release.root, "dist/lib/spawner/spawner-main.js"));
    const oldHello = await spawnerHello(oldSpawner!.socket);
    expect(oldHello.pid).toBe(oldSpawner!.pid);
    expect(oldHello.protocol).toBeUndefined();

    if (how === "drain") {
      const after = await t.startSupervisor(NEW, s);
      expect(after.ready.replay.adopted).toEqual(["old-task"]);
      // Replay did not need a spawner: the old one still runs until this build's first spawn.
      expect(alive(oldSpawner!.pid)).toBe(true);
      expect(["running", "exited"]).toContain((await after.request("run", { spec: endsAtOnce("new-task", 3) })).state);
      expect(after.stderr.join("\n")).toContain(`spawner ${oldSpawner!.pid} speaks revision 1 of its channel, not 2 (an older release's); ending it and starting another`);
      expect(alive(oldSpawner!.pid)).toBe(false);
      const newSpawner = spawnerOf(s.dir);
      expect(newSpawner?.pid).not.toBe(oldSpawner!.pid);
      expect(newSpawner?.argv).toContain(join(NEW.root, "dist/lib/spawner/spawner-main.js"));
      expect((await spawnerHello(newSpawner!.socket)).protocol).toBe(2);
      expect(await after.request("wait", { id: "new-task" })).toMatchObject({ state: "exited", exitCode: 3 });
      // Its settings reached the shim: the deadline, which the shim keeps.
      expect((await after.request("run", { spec: timesOut("new-deadline", 2) })).state).toBe("running");
      expect(programOf(recordOf(s, "new-deadline").pid)).toEqual({ exe: shim, argv: ["outlive-shim", "new-deadline"] });
      expect(await after.request("wait", { id: "new-deadline" })).toMatchObject({ state: "timed_out" });
      // The old task, forked by the old spawner, was not touched by its end; this build kills it.
      const killed = await after.request("kill", { id: "old-task", options: { graceMs: 5000 } });
      expect(killed).toMatchObject({ how: "term", record: { state: "killed" } });
      expect(readFileSync(trapFile(s, "old-task"), "utf8")).toBe("cleaned\n");
      await after.drain("disable");
      expect(spawnerOf(s.dir)).toBeNull();
    } else {
      expect((await t.cliOk(NEW, runArgs(s, endsAtOnce("new-task", 3)))).trim()).toBe("new-task");
      expect(alive(oldSpawner!.pid)).toBe(false);
      expect(await t.waitCli(NEW, s, "new-task")).toMatchObject({ code: 3, record: { state: "exited", exitCode: 3 } });
      expect(recordOf(s, "old-task").state).toBe("running");
      await t.killAndCheck(NEW, s, "old-task");
    }
    expect(readIo(s, "new-task", "stdout")).toBe("under outlive-shim\n");
    await t.endStorage(s);
  });
});

/*
 * 4. The other way, a rollback: a spawner of this build left running (its
 * daemon drained for a restart), met by 443e5b2, which does not ask for a
 * revision. Revision 2 only added optional fields: the spawner takes the old
 * release's requests (no shim settings) as revision 1 did, and the old
 * release's task runs under its wrapper with its real exit code.
 */
describe.skipIf(t.noCgroup !== null)(`a spawner of this build still running, met by ${PREVIOUS_RELEASE} (cgroup-v2, a rollback)`, () => {
  it(`takes ${PREVIOUS_RELEASE}'s spawns, which run under its wrapper`, async (ctx) => {
    const release = t.old(ctx);
    t.needShim(ctx);
    const s = t.newStorage("cgroup-v2");
    const before = await t.startSupervisor(NEW, s);
    expect((await before.request("run", { spec: runsUntilKilled(s, "new-task") })).state).toBe("running");
    await before.drain("restart");
    await armed(s, "new-task");
    const newSpawner = spawnerOf(s.dir);
    expect(newSpawner?.argv).toContain(join(NEW.root, "dist/lib/spawner/spawner-main.js"));

    const after = await t.startSupervisor(release, s);
    expect(after.ready.replay.adopted).toEqual(["new-task"]);
    expect(["running", "exited"]).toContain((await after.request("run", { spec: endsAtOnce("old-task", 5) })).state);
    // Handed to the spawner that ran: none was started.
    expect(after.stderr.join("\n")).not.toMatch(/spawner \d+ started in/);
    expect(spawnerOf(s.dir)?.pid).toBe(newSpawner!.pid);
    expect(await after.request("wait", { id: "old-task" })).toMatchObject({ state: "exited", exitCode: 5 });
    expect(readIo(s, "old-task", "stdout")).toBe("under sh\n");
    const killed = await after.request("kill", { id: "new-task", options: { graceMs: 5000 } });
    expect(killed).toMatchObject({ how: "term", record: { state: "killed" } });
    expect(readFileSync(trapFile(s, "new-task"), "utf8")).toBe("cleaned\n");
    await after.drain("disable");
    expect(spawnerOf(s.dir)).toBeNull();
    await t.endStorage(s);
  }, 180_000);
});
