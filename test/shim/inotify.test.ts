import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupShims, codeOf, running, type ShimRun, shimUnderTest, startShim } from "../support/shim-task.ts";
import { waitFor } from "../support/wait.ts";

// When the shim takes its inotify instance: only once its output timer has backed off to its slowest (1.5 s
// of quiet files), because closing an instance that holds a watch waits ~10 ms in the kernel at exit_group,
// which its parent waits on to reap it. A short task never makes one; an idle one sleeps on it.
const shim = shimUnderTest();
if (!shim.path) console.log(`test/shim/inotify.test.ts skipped: ${shim.reason}`);
const SHIM = shim.path!;
/** bound.rs: looks at 0.1, 0.3, 0.7 and 1.5 s, then the instance. */
const BACK_OFF_MS = 1500;

/** How many inotify instances the process holds (its fds that are `anon_inode:inotify`); null once it is gone. */
function inotifyFds(pid: number): number | null {
  try {
    return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === "anon_inode:inotify";
      } catch {
        return false;
      }
    }).length;
  } catch {
    return null;
  }
}

function switches(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const count = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(status)![1]);
  return count("voluntary_ctxt_switches") + count("nonvoluntary_ctxt_switches");
}

function start(argv: string[], watch: "inotify" | "poll"): ShimRun {
  return startShim(SHIM, { settings: { command: { argv }, maxOutput: 4096, watch } });
}

/** Samples the shim's inotify fds every 20 ms until it is gone (or `untilMs` has passed); the most seen. */
async function mostInotifyFds(run: ShimRun, untilMs: number): Promise<number> {
  let most = 0;
  const end = Date.now() + untilMs;
  while (Date.now() < end) {
    const n = inotifyFds(run.pid);
    if (n === null || !running(run.pid)) break;
    most = Math.max(most, n);
    await new Promise((r) => setTimeout(r, 20));
  }
  return most;
}

describe.skipIf(!shim.path)("the shim's inotify instance", () => {
  afterEach(cleanupShims);

  it("a short task (under a second, writing output) never makes one", async () => {
    const run = start(["sh", "-c", "echo hi; sleep 0.2; echo there; sleep 0.5"], "inotify");
    await waitFor("the command", () => run.read("command-pid") !== "");
    expect(await mostInotifyFds(run, 5000)).toBe(0);
    expect(await codeOf(run)).toBe(0);
    expect(run.read("stdout")).toBe("hi\nthere\n");
  });

  it("an idle task takes one after the back-off, not before, and then wakes for nothing", async () => {
    const run = start(["sleep", "600"], "inotify");
    await waitFor("the command", () => run.read("command-pid") !== "");
    // Well within the back-off, on a machine that is not overloaded: still polling.
    if (Date.now() - run.startedAt < BACK_OFF_MS / 3) expect(inotifyFds(run.pid)).toBe(0);
    await waitFor("an inotify instance", () => inotifyFds(run.pid) === 1, 10_000);
    expect(Date.now() - run.startedAt).toBeGreaterThanOrEqual(BACK_OFF_MS);
    const before = switches(run.pid);
    await new Promise((r) => setTimeout(r, 4000));
    const after = switches(run.pid);
    console.log(`idle shim after the back-off: ${after - before} context switches over 4 s (${before} before)`);
    expect(after - before).toBe(0);
    expect(inotifyFds(run.pid)).toBe(1);
  });

  it("after it takes one, a write is still heard: the bound cuts the head, then it sleeps again", async () => {
    const run = start(["sh", "-c", "sleep 3; head -c 100000 /dev/zero; exec sleep 600"], "inotify");
    await waitFor("an inotify instance", () => inotifyFds(run.pid) === 1, 10_000);
    const before = switches(run.pid);
    // The first look may come mid-write (a first cut of a block or so); the last cut comes once the write is done.
    const cut = Math.floor((100_000 - 4096) / 4096) * 4096;
    await waitFor(`stdout.dropped at ${cut}`, () => Number(run.read("stdout.dropped")) === cut, 10_000);
    // Woken by the write (and its quiet time), not by a timer between.
    await new Promise((r) => setTimeout(r, 2000));
    const settled = switches(run.pid);
    await new Promise((r) => setTimeout(r, 3000));
    expect(switches(run.pid) - settled).toBe(0);
    expect(settled - before).toBeGreaterThan(0);
    expect(inotifyFds(run.pid)).toBe(1);
  });

  it("a task not allowed one (watch=poll) never takes one, and goes on looking every 1.6 s", async () => {
    const run = start(["sleep", "600"], "poll");
    await waitFor("the command", () => run.read("command-pid") !== "");
    await waitFor("the back-off", () => Date.now() - run.startedAt > BACK_OFF_MS + 500, 10_000, 50);
    const before = switches(run.pid);
    expect(await mostInotifyFds(run, 4000)).toBe(0);
    expect(switches(run.pid) - before).toBeGreaterThan(0);
  });
});
