import { existsSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupShims, procStat, type ShimRun, shimUnderTest, startShim } from "../support/shim-task.ts";
import { waitFor } from "../support/wait.ts";

// What a quiet task costs: the shim is one process beside the command, wakes for nothing (inotify, once the
// timer has backed off) or a backing-off timer (poll), forks nothing, and stays small (PSS).
const shim = shimUnderTest();
if (!shim.path) console.log(`test/shim/idle.test.ts skipped: ${shim.reason}`);
const SHIM = shim.path!;
const WINDOW_MS = 10_000;

interface Sample {
  /** utime + stime, clock ticks. */
  cpu: number;
  /**
   * Time on a CPU, ns: /proc/PID/schedstat's first field, counted by the scheduler, where utime and stime are
   * sampled (a whole 10 ms tick charged to whoever runs when it fires). Null where the kernel keeps no schedstat.
   */
  runNs: number | null;
  /** voluntary + involuntary context switches: each wake-up is at least one. */
  switches: number;
  minflt: number;
  children: string;
}

function sample(pid: number): Sample {
  const stat = procStat(pid)!;
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const count = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(status)![1]);
  return {
    // Fields 14 and 15 of stat (utime, stime); procStat's index 0 is field 3.
    cpu: Number(stat[11]) + Number(stat[12]),
    runNs: existsSync(`/proc/${pid}/schedstat`) ? Number(readFileSync(`/proc/${pid}/schedstat`, "latin1").split(" ")[0]) : null,
    switches: count("voluntary_ctxt_switches") + count("nonvoluntary_ctxt_switches"),
    minflt: Number(stat[7]),
    children: readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim(),
  };
}

/** The shim's proportional set size, kB (its share of the pages it shares with other shims, all of its own), and its parts. */
function pssKb(pid: number): { pss: number; anon: number; file: number; rss: number } {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(rollup)![1]);
  return { pss: kb("Pss"), anon: kb("Pss_Anon"), file: kb("Pss_File"), rss: kb("Rss") };
}

async function startIdle(n: number, watch: "inotify" | "poll"): Promise<ShimRun[]> {
  const runs: ShimRun[] = [];
  // A deadline an hour away and an output bound: both armed, neither should wake the shim while nothing happens.
  for (let i = 0; i < n; i++) runs.push(startShim(SHIM, { settings: { command: { argv: ["sleep", "600"] }, maxOutput: 4096, watch, deadlineMs: 3_600_000 } }));
  await waitFor("every command", () => runs.every((r) => r.read("command-pid") !== ""));
  return runs;
}

describe.skipIf(!shim.path)("an idle task's shim", () => {
  afterEach(cleanupShims);

  it(`wakes for nothing with inotify: 20 idle tasks over ${WINDOW_MS / 1000} s use no CPU, make no wake-up and fork nothing`, async () => {
    const runs = await startIdle(20, "inotify");
    // Settled: past the back-off (looks at 0.1, 0.3, 0.7, 1.5 s, then the inotify instance), and the command
    // started (SIGCHLD never comes while it runs).
    await waitFor("the back-off", () => Date.now() - runs[runs.length - 1].startedAt > 2500, 10_000, 100);
    const before = runs.map((r) => sample(r.pid));
    const at = Date.now();
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    const after = runs.map((r) => sample(r.pid));
    const elapsed = Date.now() - at;
    const ticks = after.reduce((sum, a, i) => sum + a.cpu - before[i].cpu, 0);
    const wakeups = after.reduce((sum, a, i) => sum + a.switches - before[i].switches, 0);
    console.log(`inotify: 20 idle shims over ${elapsed} ms: ${ticks} clock ticks of CPU in all, ${wakeups} context switches`);
    after.forEach((a, i) => {
      expect(a.cpu - before[i].cpu).toBe(0);
      expect(a.switches - before[i].switches).toBe(0);
      expect(a.minflt - before[i].minflt).toBe(0);
      // Its only child is the command, now as before: nothing forked in between (a fork would have woken it).
      expect(a.children).toBe(runs[i].read("command-pid").trim());
    });
  });

  it(`backs off to a look every 1.6 s with watch=poll: 20 idle tasks over ${WINDOW_MS / 1000} s, a few wake-ups each, no fork`, async () => {
    const runs = await startIdle(20, "poll");
    // Past the back-off (100, 200, 400, 800 ms): from here on one look every 1.6 s.
    await waitFor("the back-off", () => Date.now() - runs[runs.length - 1].startedAt > 2000, 10_000, 100);
    const before = runs.map((r) => sample(r.pid));
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    const after = runs.map((r) => sample(r.pid));
    const ticks = after.reduce((sum, a, i) => sum + a.cpu - before[i].cpu, 0);
    // On CPU in all, ms: by schedstat where the kernel keeps it; else the sampled ticks, 10 ms each.
    const onCpuMs = after.every((a) => a.runNs !== null)
      ? after.reduce((sum, a, i) => sum + a.runNs! - before[i].runNs!, 0) / 1e6
      : ticks * 10;
    const wakeups = after.map((a, i) => a.switches - before[i].switches);
    console.log(`poll: 20 idle shims over ${WINDOW_MS} ms: ${onCpuMs.toFixed(2)} ms on CPU in all (${ticks} clock ticks charged), context switches per shim ${Math.min(...wakeups)}..${Math.max(...wakeups)}`);
    // 10 s / 1.6 s is 6 or 7 looks; a loaded machine may add an involuntary switch or two.
    for (const w of wakeups) expect(w).toBeLessThanOrEqual(12);
    // At most 0.5% of one core for the 20 (bench/idle.ts: 0.1–0.14% for 50 on the timer, quiet). Not the ticks:
    // they are sampled (a tick that fires mid-look charges a whole 10 ms), and one loaded run was charged 6.
    expect(onCpuMs).toBeLessThanOrEqual(WINDOW_MS * 0.005);
    after.forEach((a, i) => expect(a.children).toBe(runs[i].read("command-pid").trim()));
  });

  // A lone shim's PSS is mostly the static binary's own pages (Pss_File: the kernel maps nearly all of it,
  // as it does for a static C program that only calls pause(), 692 kB here), which every other shim
  // shares: what a task costs is its private memory and its share of those pages, as among 20 below.
  it("is small: at most 512 KiB of PSS each among 20 shims, and of private memory alone", async () => {
    const [alone] = await startIdle(1, "inotify");
    const one = pssKb(alone.pid);
    const many = await startIdle(20, "inotify");
    const sizes = many.map((r) => pssKb(r.pid));
    const max = Math.max(...sizes.map((s) => s.pss));
    const avg = sizes.reduce((s, x) => s + x.pss, 0) / sizes.length;
    console.log(`PSS: one shim alone ${one.pss} kB (${one.anon} kB private, ${one.file} kB of the binary; RSS ${one.rss} kB); ` +
      `among 21, ${avg.toFixed(0)} kB on average, ${max} kB at most (${sizes[0].anon} kB private)`);
    expect(one.anon).toBeLessThanOrEqual(512);
    expect(max).toBeLessThanOrEqual(512);
  });
});
