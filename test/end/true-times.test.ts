import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ModuleProcess } from "../../harness/inside/module/module-client.ts";
import { CgroupV2Placement, type TaskRecord } from "../../lib/internal.ts";
import { DEFAULT_POLL_MS, liveGroupMembers } from "../../lib/kill/process-group.ts";
import { parseProcStat } from "../../lib/proc/stat.ts";
import { processStartedAt, START_TIME_PRECISION_MS } from "../../lib/proc/start-time.ts";
import { outliveCliAwaited } from "../support/cli.ts";
import { unfinishedGroupMembers } from "../support/group.ts";
import { cleanupShims, codeOf, shimUnderTest, startShim } from "../support/shim-task.ts";
import { defaultProgram } from "../support/task-program.ts";
import { exitCodeWritten, waitFor } from "../support/wait.ts";

// The four kinds of end, on real processes, each dated by the evidence its record names: finishedAt within
// 50 ms of that evidence (a marker's own file time, or the moment the end was observed), startedAt the kernel's
// start of the task's first process (to two clock ticks), durationMs = finishedAt − startedAt.
const CLI = join(__dirname, "..", "..", "dist", "scripts", "outlive.js");
const WITHIN_MS = 50;
// The start is checked against the kernel's own record of it: the task's command copies its parent's
// /proc/<pid>/stat line (the shim's, or the shell wrapper's: the task's first process, record.pid) as its first
// act, while that parent is certainly alive, and startedAt must be that process's start time to two clock ticks.
// A `date` stamp taken by the command cannot bound the start from above on a busy machine: a start is a chain of
// processes each waiting its turn for a core, and a burst once put 318 ms between the shim's start and the stamp
// while bare runs timed beside it took 10-14 ms.
// The end has no such kernel record, so the command's last `date` stamp stands in for it: the marker comes a
// scheduling of the shim after it, longer on a loaded machine (2 cores, load 4: up to 51 ms; load 8: 130 ms, and
// 250 ms seen). So the bound on that gap is measured in the same test, as the machine is then: the slowest of a few
// bare runs of the task's own program (the shim, spawned straight from here with `sh -c date` as its command; the
// shell wrapper's stand-in, a shell starting a shell), timed from the spawn call to the stamp, beside the task.
// Twice that and two clock ticks, times how crowded the cores are, with a floor for an idle machine. File times run
// up to a clock tick (4 ms) behind `date`.
const PROXY_FLOOR_MS = 50;
const SHIM = defaultProgram() === "shim" ? shimUnderTest().path : null;

/** How late a task's command has its first moment after its program is spawned, on this machine now, `n` times. */
async function startLatency(n = 3): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    if (SHIM) {
      const run = startShim(SHIM, { settings: { command: { argv: ["sh", "-c", "date +%s%3N"] } } });
      await codeOf(run);
      samples.push(Number(run.read("stdout").trim()) - run.startedAt);
      continue;
    }
    const t0 = Date.now();
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn("sh", ["-c", "sh -c 'date +%s%3N'"], { stdio: ["ignore", "pipe", "ignore"] });
      let text = "";
      child.stdout.on("data", (d) => (text += d));
      child.once("error", reject);
      child.once("close", () => resolve(text));
    });
    samples.push(Number(out.trim()) - t0);
  }
  return samples;
}

/**
 * How much longer than alone a chain of processes takes on this machine now: the run queue per core (the
 * 1-minute load over the cores, at least 1). A bare run is one sample; a task's start is a chain (the spawner
 * writes the shim its settings, the shim forks, the shell starts), each link waiting its turn for a core.
 */
const crowding = () => Math.max(1, Math.max(loadavg()[0], runnableNow() - 1) / cpus().length);

/**
 * The processes runnable at this moment (the fourth field of /proc/loadavg, this reader among them): the 1-minute
 * average lags a load that has just begun (`.ci/loaded` starts stress-ng moments before these tests).
 */
function runnableNow(): number {
  return Number(readFileSync("/proc/loadavg", "utf8").split(" ")[3]?.split("/")[0]) || 0;
}

/**
 * How late timers fire on this machine while something runs beside them: a timer at `intervalMs` (the interval of
 * the looks whose bracket is bounded) and, given `look`, that look timed every fifth tick (its own time kept out of
 * the lateness). `stop()` ends the sampling and gives the largest lateness and the longest look, in ms.
 */
function sampleLateness(intervalMs: number, look?: () => unknown): { stop(): { timerLate: number; lookMs: number } } {
  const late: number[] = [];
  const looks: number[] = [];
  let prev = Date.now();
  const timer = setInterval(() => {
    const now = Date.now();
    late.push(Math.max(0, now - prev - intervalMs));
    if (look && late.length % 5 === 0) {
      look();
      looks.push(Date.now() - now);
    }
    prev = Date.now();
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      return { timerLate: Math.max(0, ...late), lookMs: Math.max(0, ...looks) };
    },
  };
}

/**
 * The bound on the marker's distance after the command's last `date` stamp, given bare runs timed beside the end and
 * how late a timer fired there: the command's shell and then the task's first process each wait that long, at most,
 * to be run again.
 */
const endBound = (samples: number[], timerLate: number) => Math.round(Math.max(PROXY_FLOOR_MS, (2 * Math.max(...samples) + 20) * crowding()) + 2 * timerLate);
const endBoundSays = (samples: number[], timerLate: number) =>
  `finishedAt after the command's last moment (bare runs took ${samples.join(", ")} ms, a 10 ms timer fired up to ${timerLate} ms late, load ${loadavg()[0]} on ${cpus().length} cores)`;
const cleanups: Array<() => void> = [];
/** Run after every other clean-up: the cgroups left once the tasks in them are gone. */
const lastCleanups: Array<() => void> = [];
afterAll(async () => {
  [...cleanups.reverse(), ...lastCleanups].forEach((f) => f());
  await cleanupShims();
});

function newStorage(): string {
  const storage = mkdtempSync(join(tmpdir(), "outlive-times-"));
  cleanups.push(() => {
    outlive(storage, "stop-all");
    rmSync(storage, { recursive: true, force: true });
  });
  return storage;
}

function outlive(storage: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, args[0], "--storage", storage, ...args.slice(1)], { encoding: "utf8", timeout: 30_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const record = (storage: string, id: string): TaskRecord => JSON.parse(readFileSync(join(storage, "tasks", id, "record.json"), "utf8"));
const ioTime = (storage: string, id: string, file: string) => statSync(join(storage, "tasks", id, "io", file)).mtimeMs;
/** The wrapper's end marks: io/ended, made as its command ended (io/exit's code follows after its watchdog's last look). */
const endMark = (storage: string, id: string) => {
  expect(existsSync(join(storage, "tasks", id, "io", "ended"))).toBe(true);
  return ioTime(storage, id, "ended");
};
const ms = (iso: string | null | undefined) => Date.parse(iso!);

/**
 * A shell task that first copies its parent's /proc stat line (the task's first process: its start time, read
 * while it is surely alive; a builtin `read`, no fork) to FILE.parent, then writes the moment it began (epoch ms,
 * by `date`) to FILE, then runs REST.
 */
const stamped = (file: string, rest: string) => `read l < /proc/$PPID/stat; echo "$l" > ${file}.parent; date +%s%3N > ${file}; ${rest}`;

/** startedAt is the kernel's start of the task's first process, and so comes before the command inside it began. */
function expectTrueStart(r: TaskRecord, stampFile: string) {
  const parent = parseProcStat(readFileSync(`${stampFile}.parent`, "utf8").trim());
  expect(parent?.pid, "the command's parent is the task's first process").toBe(r.pid);
  const kernelStart = processStartedAt(parent!.startTime)!.getTime();
  const startedAt = ms(r.startedAt);
  expect(Math.abs(startedAt - kernelStart), `startedAt ${r.startedAt} vs the kernel's start of pid ${r.pid}, ${new Date(kernelStart).toISOString()}`).toBeLessThanOrEqual(START_TIME_PRECISION_MS);
  expect(startedAt, "startedAt vs the command's own first moment").toBeLessThanOrEqual(Number(readFileSync(stampFile, "utf8")) + 10);
  expect(startedAt).toBeGreaterThanOrEqual(ms(r.createdAt) - 10);
}

function expectDuration(r: TaskRecord) {
  expect(r.durationMs).toBe(ms(r.finishedAt) - ms(r.startedAt));
}

describe("true times, the four kinds of end", () => {
  it("a task that ends while no supervisor runs is dated by its exit marker, not by the command that notices it", async () => {
    const storage = newStorage();
    const stamp = join(storage, "began");
    const endStamp = join(storage, "ending");
    expect(outlive(storage, "run", "--id", "alone", "--", "sh", "-c", stamped(stamp, `sleep 0.3; date +%s%3N > ${endStamp}; exit 3`)).code).toBe(0);
    // Beside the task's end: bare runs, and how late a timer fires (after the CLI, which blocked this worker).
    const sampler = sampleLateness(10);
    const spawns = await startLatency();
    await waitFor("the wrapper to write its exit code", () => exitCodeWritten(storage, "alone"));
    const { timerLate } = sampler.stop();
    // Noticed clearly later: a supervisor opens only now.
    await new Promise((r) => setTimeout(r, 700));
    const noticedFrom = Date.now();
    const waited = outlive(storage, "wait", "alone", "--json");
    expect(waited.code).toBe(3);
    const r = record(storage, "alone");
    expect(r).toMatchObject({ state: "exited", exitCode: 3, finishedAtSource: "exit-marker", endedAfter: null });
    expect(Math.abs(ms(r.finishedAt) - endMark(storage, "alone"))).toBeLessThanOrEqual(WITHIN_MS);
    expect(ms(r.finishedAt)).toBeLessThan(noticedFrom);
    // And the marker's time is the true end: just after the command's own last moment.
    const commandEnding = Number(readFileSync(endStamp, "utf8"));
    expect(ms(r.finishedAt)).toBeGreaterThanOrEqual(commandEnding - 10);
    expect(ms(r.finishedAt) - commandEnding, endBoundSays(spawns, timerLate)).toBeLessThanOrEqual(endBound(spawns, timerLate));
    expectTrueStart(r, stamp);
    expectDuration(r);
    expect(r.durationMs).toBeGreaterThanOrEqual(300);
  });

  it("a timeout is dated by the exit marker the timed-out task left, or by the watchdog's marker when it left none", async () => {
    const storage = newStorage();
    const stamp = join(storage, "began");
    // Ends on the watchdog's TERM: the wrapper writes 143.
    expect(outlive(storage, "run", "--id", "late", "--timeout", "1", "--", "sh", "-c", stamped(stamp, "sleep 30")).code).toBe(0);
    // Ignores TERM: the watchdog's KILL after its grace ends the wrapper too, so only the timed-out marker dates it.
    const stamp2 = join(storage, "began2");
    expect(outlive(storage, "run", "--id", "deaf", "--timeout", "1", "--", "sh", "-c", stamped(stamp2, "trap '' TERM; sleep 30")).code).toBe(0);
    await waitFor("the late task's exit code", () => exitCodeWritten(storage, "late"));
    const deafGroup = record(storage, "deaf").pgid!;
    // Its watchdog's marker, then the group ended by its KILL: zombies handed to a PID 1 that reaps no orphan have ended too.
    await waitFor("the deaf task's timed-out marker", () => existsSync(join(storage, "tasks", "deaf", "io", "timed-out")), 45_000);
    await waitFor("the deaf task's group to be killed by its watchdog", () => unfinishedGroupMembers(deafGroup).length === 0, 45_000);
    await new Promise((r) => setTimeout(r, 300));

    const noticedFrom = Date.now();
    // wait's own code for an end that is not the task's own exit (timed_out): 125.
    expect(outlive(storage, "wait", "late").code).toBe(125);
    const late = record(storage, "late");
    expect(late).toMatchObject({ state: "timed_out", exitCode: 143, finishedAtSource: "exit-marker" });
    expect(Math.abs(ms(late.finishedAt) - endMark(storage, "late"))).toBeLessThanOrEqual(WITHIN_MS);
    // The true end came at the deadline (the marker its watchdog, or a supervisor's deadline kill, made), before anyone looked.
    expect(ms(late.finishedAt)).toBeGreaterThanOrEqual(ioTime(storage, "late", "timed-out") - 10);
    expect(ms(late.finishedAt)).toBeLessThan(noticedFrom);
    expectTrueStart(late, stamp);
    expectDuration(late);

    expect(outlive(storage, "wait", "deaf").code).toBe(125);
    const deaf = record(storage, "deaf");
    expect(deaf).toMatchObject({ state: "timed_out", exitCode: null, finishedAtSource: "timed-out-marker" });
    expect(Math.abs(ms(deaf.finishedAt) - ioTime(storage, "deaf", "timed-out"))).toBeLessThanOrEqual(WITHIN_MS);
    expect(ms(deaf.finishedAt)).toBeLessThan(noticedFrom);
    // At its deadline: the watchdog's (its start plus the timeout) or, when the CLI's supervisor was still up, that
    // supervisor's own deadline kill's (the record's deadlineAt; its timer fires up to 5 ms early, the file's coarse
    // clock reads up to a tick early). Both mark io/timed-out before their TERM.
    expect(ms(deaf.finishedAt)).toBeGreaterThanOrEqual(ms(deaf.deadlineAt) - 5 - START_TIME_PRECISION_MS);
    expectTrueStart(deaf, stamp2);
    expectDuration(deaf);
  });

  it("a kill is dated by the exit marker when the task left one, else by the moment its group was seen gone", async () => {
    const storage = newStorage();
    const stamp = join(storage, "began");
    expect(outlive(storage, "run", "--id", "term", "--", "sh", "-c", stamped(stamp, "sleep 30")).code).toBe(0);
    const stamp2 = join(storage, "began2");
    expect(outlive(storage, "run", "--id", "deaf", "--", "sh", "-c", stamped(stamp2, "trap '' TERM; sleep 30")).code).toBe(0);

    const term = JSON.parse(outlive(storage, "kill", "term", "--grace", "2000", "--json").out);
    expect(term.how).toBe("term");
    const t = record(storage, "term");
    expect(t).toMatchObject({ state: "killed", exitCode: 143, finishedAtSource: "exit-marker" });
    expect(Math.abs(ms(t.finishedAt) - endMark(storage, "term"))).toBeLessThanOrEqual(WITHIN_MS);
    expectTrueStart(t, stamp);
    expectDuration(t);

    // The two looks that bracket the SIGKILL are a poll interval apart, plus how late that timer fires, plus the
    // looks themselves: the first is dated before it reads /proc, the second after, and with the leader gone a
    // look reads all of /proc (a zombie still answers kill(-pgid, 0)). Both are measured here, beside the kill,
    // on this machine as it is then: a sampler at the ladder's interval, and every fifth tick the same look timed
    // (its own time kept out of the lateness). The CLI runs without blocking this worker, so the sampler runs.
    const deafPgid = record(storage, "deaf").pgid!;
    const sampler = sampleLateness(DEFAULT_POLL_MS, () => liveGroupMembers(deafPgid));
    const killing = await outliveCliAwaited(["kill", "--storage", storage, "deaf", "--grace", "300", "--json"]);
    const { timerLate, lookMs } = sampler.stop();
    expect(killing.code, killing.err).toBe(0);
    const killed = JSON.parse(killing.out);
    expect(killed.how).toBe("kill");
    const d = record(storage, "deaf");
    expect(existsSync(join(storage, "tasks", "deaf", "io", "exit")) && readFileSync(join(storage, "tasks", "deaf", "io", "exit"), "utf8").trim()).toBe("");
    expect(d).toMatchObject({ state: "killed", exitCode: null, finishedAtSource: "seen-gone" });
    // Seen alive after the grace, then gone: the two looks bracket the SIGKILL, and the reason says so.
    expect(ms(d.endedAfter)).toBeGreaterThanOrEqual(ms(d.killStartedAt) + 300);
    expect(ms(d.finishedAt) - ms(d.endedAfter)).toBeGreaterThanOrEqual(0);
    // And every step waits its turn for a core: the slack grows with the run queue.
    expect(ms(d.finishedAt) - ms(d.endedAfter), `two looks apart (a ${DEFAULT_POLL_MS} ms timer here fired up to ${timerLate} ms late, a look took up to ${lookMs} ms; load ${loadavg()[0]} on ${cpus().length} cores)`)
      .toBeLessThanOrEqual(DEFAULT_POLL_MS + 2 * timerLate + 2 * lookMs + WITHIN_MS * crowding());
    expect(d.reason).toContain(`ended between ${d.endedAfter} and ${d.finishedAt}`);
    expectTrueStart(d, stamp2);
    expectDuration(d);
  });
});

const cgroupProbe = await new CgroupV2Placement({ prefix: "outlive-test-times" }).probe();
const placements = ["process-group", ...(cgroupProbe.ok ? ["cgroup-v2"] : [])];
if (!cgroupProbe.ok) console.log(`true-times adopted test: cgroup-v2 variant skipped: ${cgroupProbe.reason}`);
lastCleanups.push(() => {
  // The placement removes its task cgroups and its base with its last task; only what is still there
  // (a test that failed before its tasks ended) is removed here, deepest first, once empty.
  const base = cgroupProbe.ok ? String(cgroupProbe.details.baseDir) : null;
  if (!base || !existsSync(base)) return;
  for (const name of readdirSync(base)) {
    const dir = join(base, name);
    if (!statSync(dir).isDirectory()) continue;
    for (const pid of readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean)) {
      try {
        process.kill(Number(pid), "SIGKILL");
      } catch {
        // gone already
      }
    }
    spawnSync("sh", ["-c", `for i in 1 2 3 4 5 6 7 8 9 10; do [ -s "${dir}/cgroup.procs" ] || exit 0; sleep 0.1; done`]);
    rmdirSync(dir);
  }
  rmdirSync(base);
});

describe.each(placements)("an adopted task (%s)", (placement) => {
  it("started by one supervisor that dies, ends under the next, dated by its evidence", async () => {
    const storage = mkdtempSync(join(tmpdir(), "outlive-times-"));
    cleanups.push(() => rmSync(storage, { recursive: true, force: true }));
    const launch = { storage, placement, prefix: "outlive-test-times", livenessMs: 100 };
    const first = await ModuleProcess.start(launch);
    cleanups.push(() => first.child.kill("SIGKILL"));
    const stamp = join(storage, "began");
    const stamp2 = join(storage, "began2");
    const endStamp = join(storage, "ending");
    // "ends" ends once the test says so (after the second supervisor has adopted it), not after a fixed time
    // that a slow start of the second could outlast.
    const go = join(storage, "go");
    const ends = (await first.request("run", { spec: { id: "ends", shell: stamped(stamp, `while [ ! -e ${go} ]; do sleep 0.05; done; date +%s%3N > ${endStamp}; exit 4`) } })).task;
    const shot = (await first.request("run", { spec: { id: "shot", shell: stamped(stamp2, "sleep 30") } })).task;
    // A failed assertion below must not leave the tasks running (after a pass their groups are gone, never signalled).
    let passed = false;
    cleanups.push(() => {
      for (const t of passed ? [] : [ends, shot]) {
        try {
          process.kill(-t.pgid, "SIGKILL");
        } catch {
          // ended, as it should have
        }
      }
    });
    await first.kill9();

    const second = await ModuleProcess.start(launch);
    cleanups.push(() => second.child.kill("SIGKILL"));
    expect(second.ready.replay.adopted.sort()).toEqual(["ends", "shot"]);
    // The bare runs and the timer that bound the end's marker meet the machine as that end meets it, beside it.
    const endSampler = sampleLateness(10);
    const sampling = startLatency();
    writeFileSync(go, "");
    const ended = (await second.nextEvent((m) => m.event === "completion" && m.task.id === "ends")).task as TaskRecord;
    const spawns = await sampling;
    const { timerLate: endTimerLate } = endSampler.stop();
    expect(ended).toMatchObject({ state: "exited", exitCode: 4, finishedAtSource: "exit-marker" });
    // Twice under load finishedAt stood 0.5 s before io/ended: the exit marker's time was read before its code, and was
    // the placeholder's (test/observe/exit-marker.test.ts). The message gives what the record was dated from.
    const endedMs = endMark(storage, "ends");
    const exitMs = ioTime(storage, "ends", "exit");
    expect(Math.abs(ms(ended.finishedAt) - endedMs), `finishedAt ${ended.finishedAt}; io/ended ${new Date(endedMs).toISOString()} (${endedMs}), io/exit ${new Date(exitMs).toISOString()} (${exitMs}); ${ended.reason}`)
      .toBeLessThanOrEqual(WITHIN_MS);
    expect(ended.incarnation).toBe(ends.incarnation);
    const commandEnding = Number(readFileSync(endStamp, "utf8"));
    expect(ms(ended.finishedAt)).toBeGreaterThanOrEqual(commandEnding - 10);
    expect(ms(ended.finishedAt) - commandEnding, endBoundSays(spawns, endTimerLate)).toBeLessThanOrEqual(endBound(spawns, endTimerLate));
    expectTrueStart(ended, stamp);
    expectDuration(ended);

    // Killed from outside, no exit code: dated by what the live supervisor saw (its cgroup emptying, or the
    // group gone on a liveness look), never before the kill and, for the emptying, within 50 ms of it.
    await waitFor("the shot task's command to begin", () => existsSync(stamp2) && readFileSync(stamp2, "utf8").length > 0);
    // How late a timer of the liveness interval fires on this machine now: the supervisor's looks come that
    // much further apart than its interval, so the bracket of two looks is bounded by what is measured here.
    const sampler = sampleLateness(launch.livenessMs);
    const killedAt = Date.now();
    process.kill(-shot.pgid, "SIGKILL");
    // A signal lands when the kernel gets to it: on a loaded machine a look just after kill() returns can still
    // see the group alive. The group seen finished here bounds the last look that saw it alive.
    await waitFor("the shot task's group to finish", () => unfinishedGroupMembers(shot.pgid).length === 0);
    const goneSeenAt = Date.now();
    const s = (await second.nextEvent((m) => m.event === "completion" && m.task.id === "shot")).task as TaskRecord;
    const { timerLate } = sampler.stop();
    expect(s.exitCode).toBe(null);
    expect(["cgroup-emptied", "seen-gone"]).toContain(s.finishedAtSource);
    expect(ms(s.finishedAt)).toBeGreaterThanOrEqual(killedAt - 5);
    if (s.finishedAtSource === "cgroup-emptied") {
      // The cgroup emptied between the kill and the moment the group was seen finished here.
      expect(ms(s.finishedAt)).toBeLessThanOrEqual(goneSeenAt + WITHIN_MS);
    } else {
      // The last look that saw it alive came before the group was gone; the first that saw it gone, after the kill.
      expect(ms(s.endedAfter)).toBeLessThanOrEqual(goneSeenAt + 5);
      // A look itself (reading /proc) waits its turn for a core too: the slack grows with the run queue.
      expect(ms(s.finishedAt) - ms(s.endedAfter), `two looks apart (a ${launch.livenessMs} ms timer here fired up to ${timerLate} ms late; load ${loadavg()[0]} on ${cpus().length} cores)`)
        .toBeLessThanOrEqual(launch.livenessMs + 2 * timerLate + WITHIN_MS * crowding());
      expect(s.reason).toContain(`ended between ${s.endedAfter} and ${s.finishedAt}`);
    }
    expectTrueStart(s, stamp2);
    expectDuration(s);
    passed = true;
    await second.drain("disable");
  });
});
