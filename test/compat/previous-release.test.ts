import { existsSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { CgroupV2Placement } from "../../lib/internal.ts";
import { readExitMarkerNow } from "../../lib/observe/exit-marker.ts";
import { groupHasAnyMember } from "../support/group.ts";
import { buildPreviousRelease, PREVIOUS_RELEASE } from "../support/previous-release.ts";
import { type Release, releaseCli, releaseCliOk, ReleaseSupervisor } from "../support/release-process.ts";
import { shimUnderTest } from "../support/shim-task.ts";
import { alive, countStorageOpens, programOf, spawnerHello, spawnerOf } from "../support/storage-processes.ts";
import { exitCodeWritten, waitFor } from "../support/wait.ts";

/*
 * Issue 33, "the same on-disk contract": a real build of the previous release
 * (443e5b2, whose tasks ran under `/bin/sh -c <wrapper>` and whose spawner
 * spoke revision 1 of its channel) beside this one (outlive-shim, spawner
 * revision 2), on one storage. Each release runs only in processes of its
 * own: its CLI, or its library in a child process.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const NEW: Release = { name: "this build", root: ROOT, cli: join(ROOT, "dist/scripts/bin.js"), lib: join(ROOT, "dist/pkg/outlive.js") };
let OLD: Release | null = null;
let noOld = "the previous release was not built yet";

const shim = shimUnderTest();
if (shim.path === null) console.log(`test/compat: the cases that need this build's tasks under outlive-shim are skipped: ${shim.reason}`);
const cgroupProbe = await new CgroupV2Placement({ prefix: `cmpprobe${process.pid}` }).probe();
if (!cgroupProbe.ok) console.log(`test/compat: the cgroup-v2 cases are skipped: ${cgroupProbe.reason}`);
const placements = ["process-group", ...(cgroupProbe.ok ? ["cgroup-v2"] : [])];
// Where the task cgroups' base and the spawner's home are made: beside each other, in the base's parent.
const cgroupParent = cgroupProbe.ok ? dirname(String(cgroupProbe.details.baseDir)) : "";

beforeAll(async () => {
  const built = await buildPreviousRelease((line) => console.log(`test/compat: ${line}`));
  if (built.release) OLD = { name: PREVIOUS_RELEASE, root: built.release.root, cli: built.release.cli, lib: built.release.lib };
  else console.log(`test/compat: skipping: ${(noOld = built.skip)}`);
}, 900_000);

/** The previous release, or the test skipped with the reason. */
function old(ctx: TestContext): Release {
  if (!OLD) ctx.skip(noOld);
  return OLD!;
}

/** Each release's processes get this machine's environment without outlive's own variables, and this build its shim. */
function envOf(release: Release): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("OUTLIVE_")) env[k] = v;
  if (release === NEW && shim.path !== null) env.OUTLIVE_SHIM = shim.path;
  return env;
}

/** One storage of one test: its placement and a cgroup prefix of its own. */
interface Storage {
  dir: string;
  placement: string;
  prefix: string;
  /** `--storage DIR --placement P --prefix X`, which every command but `logs` takes. */
  flags: string[];
}

const storages: Storage[] = [];
const supervisors: ReleaseSupervisor[] = [];
let made = 0;

function newStorage(placement: string): Storage {
  const dir = mkdtempSync(join(tmpdir(), "outlive-compat-"));
  const prefix = `cmp${process.pid}-${++made}`;
  const s = { dir, placement, prefix, flags: ["--storage", dir, "--placement", placement, "--prefix", prefix] };
  storages.push(s);
  return s;
}

/**
 * A daemon's supervisor on `release`'s library. Its spawner, left running by a restart's drain or a crash,
 * lives on 5 minutes instead of the default 1 with no supervisor connected: a loaded machine must not let it end
 * by itself before this build meets it. Every test ends it.
 */
async function startSupervisor(release: Release, s: Storage): Promise<ReleaseSupervisor> {
  const options = { storage: s.dir, placement: s.placement, prefix: s.prefix, mode: "daemon", control: false, spawnerIdleMs: 300_000 };
  const sup = await ReleaseSupervisor.start(release, options, envOf(release));
  supervisors.push(sup);
  return sup;
}

const cli = (release: Release, args: string[]) => releaseCli(release, args, envOf(release));
const cliOk = (release: Release, args: string[]) => releaseCliOk(release, args, envOf(release));

/** A task as both the CLI and the library take it. */
interface Spec {
  id: string;
  argv: string[];
  timeoutSeconds?: number;
}

function runArgs(s: Storage, spec: Spec): string[] {
  return ["run", ...s.flags, "--id", spec.id, ...(spec.timeoutSeconds ? ["--timeout", String(spec.timeoutSeconds)] : []), "--", ...spec.argv];
}

/*
 * The tasks each direction starts: one that runs until it is killed (with an
 * EXIT trap, to show the kill lets it clean up), one that ends, with its own
 * code, only once told to (so it ends while no supervisor runs), one that
 * ends at once, and one its deadline ends.
 */
const trapFile = (s: Storage, id: string) => join(s.dir, `trap-ran-${id}`);
const goFile = (s: Storage, id: string) => join(s.dir, `go-${id}`);
const tell = (s: Storage, id: string) => writeFileSync(goFile(s, id), "");
const runsUntilKilled = (s: Storage, id: string): Spec => ({
  id, argv: ["bash", "-c", `trap 'echo cleaned > ${trapFile(s, id)}' EXIT; echo armed; sleep 120`],
});
// Names the process it runs under (its parent): outlive-shim, or the wrapper's shell.
const endsWhenTold = (s: Storage, id: string, code: number): Spec => ({
  id, argv: ["sh", "-c", `echo "under $(cat /proc/$PPID/comm)"; while [ ! -e ${goFile(s, id)} ]; do sleep 0.05; done; echo done; exit ${code}`],
});
const endsAtOnce = (id: string, code: number): Spec => ({ id, argv: ["sh", "-c", `echo "under $(cat /proc/$PPID/comm)"; echo to-stderr >&2; exit ${code}`] });
const timesOut = (id: string, seconds: number): Spec => ({ id, argv: ["sleep", "120"], timeoutSeconds: seconds });

type Json = any;
const recordOf = (s: Storage, id: string): Json => JSON.parse(readFileSync(join(s.dir, "tasks", id, "record.json"), "utf8"));
const ioFile = (s: Storage, id: string, name: string) => join(s.dir, "tasks", id, "io", name);
const readIo = (s: Storage, id: string, name: string) => (existsSync(ioFile(s, id, name)) ? readFileSync(ioFile(s, id, name), "utf8") : "");
const exitCodeIn = (s: Storage, id: string): number | null => {
  const marker = readExitMarkerNow(ioFile(s, id, "exit"));
  return marker.kind === "code" ? marker.code : null;
};
/** `outlive wait --json ID`: the exit status and the record it printed. */
async function waitCli(release: Release, s: Storage, id: string): Promise<{ code: number; record: Json }> {
  const r = await cli(release, ["wait", ...s.flags, "--json", "--timeout", "60s", id]);
  const line = r.out.trim().split("\n").filter(Boolean).at(-1);
  if (!line) throw new Error(`${release.name}: outlive wait ${id} printed nothing (exit ${r.code}): ${r.err}`);
  return { code: r.code, record: JSON.parse(line) };
}

async function psAll(release: Release, s: Storage): Promise<Record<string, Json>> {
  const out = JSON.parse(await cliOk(release, ["ps", ...s.flags, "-a", "--json"]));
  return Object.fromEntries(out.tasks.map((t: Json) => [t.id, t]));
}

/** The cgroups under this storage's prefix (the task cgroups' base and the spawner's home), deepest first. */
function prefixCgroups(s: Storage): string[] {
  if (!cgroupParent || !existsSync(cgroupParent)) return [];
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) walk(join(dir, e.name));
    found.push(dir);
  };
  for (const name of readdirSync(cgroupParent)) if (name === s.prefix || name.startsWith(`${s.prefix}-`)) walk(join(cgroupParent, name));
  return found;
}

/**
 * Ends what the test left on a storage (this build's `stop-all`, which ends
 * tasks, its spawner, whichever release started it, and its cgroups) and
 * checks that nothing of it is left.
 */
async function endStorage(s: Storage): Promise<void> {
  const stopped = await cli(NEW, ["stop-all", ...s.flags]);
  expect(stopped.code, stopped.err).toBe(0);
  await waitFor("the storage's spawner to be gone", () => spawnerOf(s.dir) === null, 20_000);
  await waitFor(`the cgroups of prefix ${s.prefix} to be removed`, () => prefixCgroups(s).length === 0, 20_000);
}

afterAll(async () => {
  // What a failed test left: its supervisors, then each storage's tasks, spawner and cgroups.
  for (const sup of supervisors) if (sup.child.exitCode === null && sup.child.signalCode === null) sup.child.kill("SIGKILL");
  for (const s of storages) {
    if (!existsSync(s.dir)) continue;
    await cli(NEW, ["stop-all", ...s.flags]).catch(() => {});
    const spawner = spawnerOf(s.dir);
    if (spawner && spawner.argv.some((a) => /spawner-main\.js$/.test(a)) && spawner.argv.includes(spawner.socket)) process.kill(spawner.pid, "SIGKILL");
    for (const dir of prefixCgroups(s)) {
      try {
        rmdirSync(dir);
      } catch (error) {
        console.log(`test/compat: could not remove ${dir}: ${(error as Error).message}`);
      }
    }
    rmSync(s.dir, { recursive: true, force: true });
  }
}, 120_000);

/** Waits until a task started with runsUntilKilled has set its trap. */
const armed = (s: Storage, id: string) => waitFor(`${id} to set its EXIT trap`, () => readIo(s, id, "stdout").includes("armed"));

/** Kills `id` through `release`'s CLI, and checks it ended `killed`, its EXIT trap ran and none of its processes is left. */
async function killAndCheck(release: Release, s: Storage, id: string): Promise<void> {
  const before = recordOf(s, id);
  const killed = await cli(release, ["kill", ...s.flags, "--grace", "5000", id]);
  expect(killed.code, killed.err).toBe(0);
  expect(killed.out).toContain("term");
  const end = await waitCli(release, s, id);
  expect(end.code).toBe(125);
  expect(end.record.state).toBe("killed");
  expect(readFileSync(trapFile(s, id), "utf8")).toBe("cleaned\n");
  await waitFor(`${id}'s process group to be empty`, () => !groupHasAnyMember(before.pgid));
  const cgroupDir = before.location?.cgroupDir;
  if (cgroupDir) await waitFor(`${id}'s cgroup to be empty`, () => !existsSync(cgroupDir) || readFileSync(join(cgroupDir, "cgroup.procs"), "utf8").trim() === "");
}

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
    const release = old(ctx);
    const s = newStorage(placement);
    const specs = [runsUntilKilled(s, "adopted"), endsWhenTold(s, "ends-unwatched", 7), endsAtOnce("ended", 4), timesOut("times-out", 5)];
    if (how === "cli") {
      for (const spec of specs) expect((await cliOk(release, runArgs(s, spec))).trim()).toBe(spec.id);
    } else {
      const sup = await startSupervisor(release, s);
      expect(sup.ready.placement).toBe(placement);
      for (const spec of specs) expect((await sup.request("run", { spec })).state).toBe("running");
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

    const replay = JSON.parse(await cliOk(NEW, ["replay", ...s.flags, "--json"]));
    expect(replay.report.adopted).toEqual(["adopted"]);
    // This build's command ends it at its close, as it ends its own: asked to exit, it ended.
    if (oldSpawner) await waitFor("443e5b2's spawner to end", () => !alive(oldSpawner.pid));
    const finished = Object.fromEntries(replay.report.finished.map((f: Json) => [f.id, f]));
    expect(finished["ends-unwatched"]).toMatchObject({ state: "exited", exitCode: 7 });
    // Timed out by the wrapper's watchdog: its record keeps the code the wrapper wrote (143, TERM), as for any task.
    expect(finished["times-out"]).toMatchObject({ state: "timed_out", exitCode: exitCodeIn(s, "times-out") });
    expect(finished["times-out"].reason).toContain("ended by its watchdog at its deadline");
    // A daemon drained for a restart or an exiting CLI may have recorded the quick one's end itself; else replay does.
    const tasks = await psAll(NEW, s);
    expect(tasks.ended).toMatchObject({ state: "exited", exitCode: 4 });
    expect(tasks.adopted).toMatchObject({ state: "running" });

    expect(await cli(NEW, ["logs", "--storage", s.dir, "ends-unwatched"])).toMatchObject({ code: 0, out: "under sh\ndone\n" });
    expect(await cli(NEW, ["logs", "--storage", s.dir, "--stderr", "ended"])).toMatchObject({ code: 0, out: "to-stderr\n" });
    expect(await waitCli(NEW, s, "ends-unwatched")).toMatchObject({ code: 7, record: { state: "exited", exitCode: 7 } });
    expect(await waitCli(NEW, s, "times-out")).toMatchObject({ code: 125, record: { state: "timed_out" } });

    await killAndCheck(NEW, s, "adopted");

    // A new task on the same storage runs under this build's shim, beside the old tasks' records.
    if (shim.path !== null) {
      expect((await cliOk(NEW, runArgs(s, endsAtOnce("after", 3)))).trim()).toBe("after");
      expect(await waitCli(NEW, s, "after")).toMatchObject({ code: 3, record: { state: "exited", exitCode: 3 } });
      expect(readIo(s, "after", "stdout")).toBe("under outlive-shim\n");
    }
    await endStorage(s);
  });
});

/*
 * 2. A storage this build wrote, its tasks under outlive-shim: 443e5b2 reads
 * and ends them right. (Its census, and its check of a spawn cut short before
 * the pid was recorded, do not know the shim's argv; neither is tested here.)
 */
describe.each(placements)(`tasks this build started (outlive-shim), read by ${PREVIOUS_RELEASE} (%s)`, (placement) => {
  it("ps, wait with the exit code, logs, kill and replay of running and ended tasks", async (ctx) => {
    const release = old(ctx);
    if (shim.path === null) ctx.skip(shim.reason);
    const s = newStorage(placement);
    const specs = [
      runsUntilKilled(s, "running"),
      endsWhenTold(s, "ends-unwatched", 6),
      endsWhenTold(s, "ends-watched", 9),
      endsAtOnce("ended", 5),
      timesOut("times-out", 6),
    ];
    for (const spec of specs) expect((await cliOk(NEW, runArgs(s, spec))).trim()).toBe(spec.id);
    // They run under the shim: the leader is `outlive-shim ID`.
    for (const id of ["running", "ends-unwatched", "ends-watched", "times-out"]) expect(programOf(recordOf(s, id).pid)).toEqual({ exe: shim.path, argv: ["outlive-shim", id] });
    await armed(s, "running");
    await waitFor("ended to exit", () => exitCodeWritten(s.dir, "ended"));
    tell(s, "ends-unwatched");
    await waitFor("ends-unwatched to exit", () => exitCodeWritten(s.dir, "ends-unwatched"));
    expect(recordOf(s, "ends-unwatched").state).toBe("running");

    // 443e5b2's replay: the running shim tasks adopted, the ended ones read with their own codes.
    const replay = JSON.parse(await cliOk(release, ["replay", ...s.flags, "--json"]));
    expect(replay.report.adopted).toEqual(expect.arrayContaining(["ends-watched", "running"]));
    expect(replay.report.adopted).not.toContain("ends-unwatched");
    const finished = Object.fromEntries(replay.report.finished.map((f: Json) => [f.id, f]));
    expect(finished["ends-unwatched"]).toMatchObject({ state: "exited", exitCode: 6 });
    const tasks = await psAll(release, s);
    expect(tasks.ended).toMatchObject({ state: "exited", exitCode: 5 });
    expect(tasks.running).toMatchObject({ state: "running", commandPid: Number(readIo(s, "running", "command-pid").trim()) });

    expect(await cli(release, ["logs", "--storage", s.dir, "ended"])).toMatchObject({ code: 0, out: "under outlive-shim\n" });
    expect(await cli(release, ["logs", "--storage", s.dir, "--stderr", "ended"])).toMatchObject({ code: 0, out: "to-stderr\n" });
    expect(await cli(release, ["logs", "--storage", s.dir, "ends-unwatched"])).toMatchObject({ code: 0, out: "under outlive-shim\ndone\n" });
    expect(await waitCli(release, s, "ended")).toMatchObject({ code: 5, record: { state: "exited", exitCode: 5 } });

    // A wait of 443e5b2's under way while a shim task ends returns its code.
    const opens = countStorageOpens(s.dir);
    const watched = waitCli(release, s, "ends-watched");
    try {
      await waitFor("443e5b2's wait to have looked at the task once", () => opens.count() >= 1);
    } finally {
      opens.close();
    }
    expect(recordOf(s, "ends-watched").state).toBe("running");
    tell(s, "ends-watched");
    expect(await watched).toMatchObject({ code: 9, record: { state: "exited", exitCode: 9 } });
    expect(await cli(release, ["logs", "--storage", s.dir, "ends-watched"])).toMatchObject({ code: 0, out: "under outlive-shim\ndone\n" });

    // The shim's deadline, read by 443e5b2 as its own wrapper's: timed_out, with the code the shim wrote.
    await waitFor("times-out to reach its deadline", () => exitCodeWritten(s.dir, "times-out") && existsSync(ioFile(s, "times-out", "timed-out")), 30_000);
    const timedOut = await waitCli(release, s, "times-out");
    expect(timedOut).toMatchObject({ code: 125, record: { state: "timed_out", exitCode: exitCodeIn(s, "times-out") } });
    expect(timedOut.record.reason).toContain("ended by its watchdog at its deadline");

    await killAndCheck(release, s, "running");
    await endStorage(s);
  }, 180_000);
});

/*
 * 3. A spawner of 443e5b2 still running when this build first needs one: an
 * old daemon's supervisor left it (drained for a restart, or killed), with
 * cgroup-v2. It answers `hello` without a revision: this build ends it and
 * starts its own, which hands the shim its settings (on stdin), so the task
 * runs under the shim instead of being refused (exit 125).
 */
describe.skipIf(!cgroupProbe.ok)(`a spawner of ${PREVIOUS_RELEASE} still running, met by this build (cgroup-v2)`, () => {
  it.for([
    ["drained for a restart, then this build's library", "drain"],
    ["SIGKILLed, then this build's CLI", "sigkill"],
  ] as const)("its supervisor %s", { timeout: 180_000 }, async ([, how], ctx) => {
    const release = old(ctx);
    if (shim.path === null) ctx.skip(shim.reason);
    const s = newStorage("cgroup-v2");
    const before = await startSupervisor(release, s);
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
      const after = await startSupervisor(NEW, s);
      expect(after.ready.replay.adopted).toEqual(["old-task"]);
      // Replay did not need a spawner: the old one still runs until this build's first spawn.
      expect(alive(oldSpawner!.pid)).toBe(true);
      expect((await after.request("run", { spec: endsAtOnce("new-task", 3) })).state).toBe("running");
      expect(after.stderr.join("\n")).toContain(`spawner ${oldSpawner!.pid} speaks revision 1 of its channel, not 2 (an older release's); ending it and starting another`);
      expect(alive(oldSpawner!.pid)).toBe(false);
      const newSpawner = spawnerOf(s.dir);
      expect(newSpawner?.pid).not.toBe(oldSpawner!.pid);
      expect(newSpawner?.argv).toContain(join(ROOT, "dist/lib/spawner/spawner-main.js"));
      expect((await spawnerHello(newSpawner!.socket)).protocol).toBe(2);
      expect(await after.request("wait", { id: "new-task" })).toMatchObject({ state: "exited", exitCode: 3 });
      // Its settings reached the shim: the deadline, which the shim keeps.
      expect((await after.request("run", { spec: timesOut("new-deadline", 2) })).state).toBe("running");
      expect(programOf(recordOf(s, "new-deadline").pid)).toEqual({ exe: shim.path, argv: ["outlive-shim", "new-deadline"] });
      expect(await after.request("wait", { id: "new-deadline" })).toMatchObject({ state: "timed_out" });
      // The old task, forked by the old spawner, was not touched by its end; this build kills it.
      const killed = await after.request("kill", { id: "old-task", options: { graceMs: 5000 } });
      expect(killed).toMatchObject({ how: "term", record: { state: "killed" } });
      expect(readFileSync(trapFile(s, "old-task"), "utf8")).toBe("cleaned\n");
      await after.drain("disable");
      expect(spawnerOf(s.dir)).toBeNull();
    } else {
      expect((await cliOk(NEW, runArgs(s, endsAtOnce("new-task", 3)))).trim()).toBe("new-task");
      expect(alive(oldSpawner!.pid)).toBe(false);
      expect(await waitCli(NEW, s, "new-task")).toMatchObject({ code: 3, record: { state: "exited", exitCode: 3 } });
      expect(recordOf(s, "old-task").state).toBe("running");
      await killAndCheck(NEW, s, "old-task");
    }
    expect(readIo(s, "new-task", "stdout")).toBe("under outlive-shim\n");
    await endStorage(s);
  });
});
