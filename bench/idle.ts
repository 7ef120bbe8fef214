// What N idle tasks cost while nothing happens (issue 33): N tasks of `sleep 600`, started through the library
// as a user would (Supervisor.open with its defaults, run({ argv, timeoutSeconds }) with the default 32 MiB
// output bound), then a window of W seconds in which nothing is asked of them. Series, interleaved (the order
// rotated each round), each started by a supervisor of its own in a child process of this one:
//   shim-inotify  the shim, every task with an inotify instance (inotifyTasks: N)
//   shim-default  the shim with the default inotifyTasks (32): past 32 tasks the rest use the timer
//   shim-timer    the shim's timer fallback for every task (inotifyTasks: 0)
//   wrapper       the shell wrapper, its warden and the warden's sleeps (shimPath: false): the baseline
// Measured per series:
// - CPU of each task's own outlive processes, as % of one core for all N together: the sum of utime + stime +
//   cutime + cstime (/proc/PID/stat) over every process in the task's process group but the command (found by
//   walking the leader's descendants through /proc/PID/task/PID/children), at the window's end minus at its
//   start. A process reaped in between carries its time into its parent's cutime/cstime, so nothing is
//   counted twice or lost. Clock ticks (10 ms) are coarse, so the long-lived processes' on-CPU time from
//   /proc/PID/schedstat (ns) and their context switches (each wake-up is at least one) are printed beside it.
// - Forks per task: new (pid, start time) pairs among those processes, looked for every --sample-ms (100 ms)
//   through the window. A process that lives less than that can be missed, so for the wrapper this is a floor
//   (its idle fork is the warden's `sleep`, which lives 1.6 s, so none is missed there); for the shim a fork
//   would need a wake-up, and its context switches say whether it had any. /proc/stat's `processes` (every
//   fork on the machine, other engineers' too) is printed as an upper bound.
// - Processes per task besides the command, at the window's end; whether each shim holds an inotify instance.
// - PSS (/proc/PID/smaps_rollup): a lone shim (measured first, no other shim of this build running), and each
//   among N; for the wrapper the sum over a task's processes.
// - The supervisor's own CPU (utime + stime of its process): the one that started the tasks, over the first
//   window; then it closes, a second one opens on the same storage and adopts them (livenessIntervalMs, default
//   1000: one look per adopted task a second), and over a second window its CPU beside that of a third
//   supervisor, opened on an empty storage at the same time (what a supervisor costs with no task). The tasks'
//   CPU is measured again over that second window.
// - With `--placement cgroup-v2` (daemon mode; each task in a cgroup of its own), each task's cgroup's
//   cpu.stat usage_usec over the window is printed too: the kernel's own precise total for everything that ran
//   in it (the command's too, which sleeps), an independent check of the /proc sums.
// Targets (issue 33): 50 idle tasks for 30 s, their shims under 0.5% of one core in all, forking nothing;
// one process per task besides the command; PSS <= 512 KiB a shim among N. The supervisor's figure has none.
// Run: npm run build && node dist/bench/idle.js [--count 50] [--seconds 30] [--rounds 1] [--series shim-inotify,shim-default,shim-timer,wrapper]
//        [--placement process-group|cgroup-v2]
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Supervisor, type SupervisorOptions } from "../lib/mod.ts";
import { median } from "./quantile.ts";

const SERIES = ["shim-inotify", "shim-default", "shim-timer", "wrapper"] as const;
type Series = (typeof SERIES)[number];
const CPU_TARGET_PERCENT = 0.5;
const PSS_TARGET_KB = 512;
/** The tasks' timeout: armed (the shim's deadline timer, the warden's deadline), never reached in a window. */
const TIMEOUT_SECONDS = 3600;

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    count: { type: "string", default: "50" },
    seconds: { type: "string", default: "30" },
    rounds: { type: "string", default: "1" },
    series: { type: "string", default: SERIES.join(",") },
    settle: { type: "string", default: "3" },
    "sample-ms": { type: "string", default: "100" },
    placement: { type: "string", default: "auto" },
    // The child's part: hold a supervisor (see holdSupervisor).
    role: { type: "string" },
    storage: { type: "string" },
    start: { type: "boolean", default: false },
  },
});

/** The options of each series' supervisors. */
function optionsOf(series: Series, n: number): SupervisorOptions {
  // The user's default (standalone: process-group), or a placement asked for (cgroup-v2 needs daemon mode).
  const where: SupervisorOptions = values.placement === "auto" ? {} : { placement: values.placement as "cgroup-v2", mode: "daemon" };
  return { ...where, ...seriesOptions(series, n) };
}

function seriesOptions(series: Series, n: number): SupervisorOptions {
  switch (series) {
    case "shim-inotify": return { inotifyTasks: n };
    case "shim-default": return {};
    case "shim-timer": return { inotifyTasks: 0 };
    case "wrapper": return { shimPath: false };
  }
}

// ---- the child: one supervisor, held open until told to close ----

/**
 * Opens a supervisor on `storage` (starting N tasks first when asked), says on stdout what it holds (one JSON
 * line), and waits for `close` (the tasks run on) or `stop` (they are ended first) on stdin.
 */
async function holdSupervisor(series: Series, storage: string, n: number, start: boolean): Promise<void> {
  const sup = await Supervisor.open({ storage, log: () => {}, ...optionsOf(series, n) });
  if (start) {
    for (let i = 0; i < n; i++) await sup.run({ argv: ["sleep", "600"], timeoutSeconds: TIMEOUT_SECONDS });
  }
  const tasks = sup.list().filter((r) => r.state === "running").map((r) => ({ id: r.id, pid: r.pid }));
  process.stdout.write(`${JSON.stringify({ placementReason: sup.placementReason, adopted: sup.replayReport.adopted.length, tasks })}\n`);
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === "stop") await sup.stopAll();
    if (line === "stop" || line === "close") break;
  }
  await sup.close();
  process.exit(0);
}

if (values.role === "hold") {
  await holdSupervisor(values.series as Series, values.storage!, Number(values.count), values.start!);
}

// ---- the measuring side ----

const N = Number(values.count);
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const SETTLE_MS = Number(values.settle) * 1000;
const SAMPLE_MS = Number(values["sample-ms"]);
const chosen = values.series!.split(",").filter(Boolean);
for (const s of chosen) if (!(SERIES as readonly string[]).includes(s)) throw new Error(`--series: expected some of ${SERIES.join(",")}, got ${JSON.stringify(s)}`);
const TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
const THIS_FILE = fileURLToPath(import.meta.url);

interface Proc {
  pid: number;
  start: string;
  /** utime + stime + cutime + cstime, clock ticks. */
  ticks: number;
  /** utime + stime alone. */
  own: number;
  /** On CPU, ns (schedstat): this process's own threads, not its reaped children. */
  ns: number;
  switches: number;
}

function readProc(pid: number): (Proc & { ppid: number; pgid: number }) | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "latin1");
    const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
    const status = readFileSync(`/proc/${pid}/status`, "latin1");
    const count = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0);
    const [utime, stime, cutime, cstime] = [f[11], f[12], f[13], f[14]].map(Number);
    return {
      pid,
      ppid: Number(f[1]),
      pgid: Number(f[2]),
      start: f[19],
      ticks: utime + stime + cutime + cstime,
      own: utime + stime,
      ns: Number(readFileSync(`/proc/${pid}/schedstat`, "latin1").split(" ")[0]),
      switches: count("voluntary_ctxt_switches") + count("nonvoluntary_ctxt_switches"),
    };
  } catch {
    return null; // ended while looked at
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "latin1").trim().split(" ").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

interface Task { id: string; pid: number; commandPid: number; io: string }

/** Every process of the task's group but the command (and anything under it): its leader first. */
function outliveProcs(t: Task): Proc[] {
  const found: Proc[] = [];
  const walk = (pid: number) => {
    const p = readProc(pid);
    if (!p || p.pgid !== t.pid) return;
    found.push(p);
    for (const c of childrenOf(pid)) if (c !== t.commandPid) walk(c);
  };
  walk(t.pid);
  return found;
}

const key = (p: Proc) => `${p.pid}/${p.start}`;

interface Snapshot { procs: Proc[][]; forksOnMachine: number; at: number; cgroupUsec: number | null }

/** The task's own cgroup v2 (its leader's, when it holds the task's id), or null. */
function cgroupOf(t: Task): string | null {
  try {
    const line = readFileSync(`/proc/${t.pid}/cgroup`, "latin1").split("\n").find((l) => l.startsWith("0::"));
    if (!line || !line.includes(t.id)) return null;
    for (const root of ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"]) {
      const dir = root + line.slice(3);
      if (existsSync(join(dir, "cpu.stat"))) return dir;
    }
  } catch {
    // Gone, or no cgroup v2 here.
  }
  return null;
}

function cgroupUsec(tasks: Task[]): number | null {
  let sum = 0;
  for (const t of tasks) {
    const dir = cgroupOf(t);
    if (!dir) return null;
    sum += Number(/^usage_usec (\d+)/m.exec(readFileSync(join(dir, "cpu.stat"), "latin1"))![1]);
  }
  return sum;
}

function snapshot(tasks: Task[]): Snapshot {
  const stat = readFileSync("/proc/stat", "latin1");
  return {
    procs: tasks.map(outliveProcs),
    forksOnMachine: Number(/^processes (\d+)/m.exec(stat)![1]),
    at: performance.now(),
    cgroupUsec: cgroupUsec(tasks),
  };
}

function load(): string {
  const avg = readFileSync("/proc/loadavg", "latin1").split(" ").slice(0, 3).join(" ");
  let pressure = "";
  try {
    const some = /^some avg10=([\d.]+) avg60=([\d.]+)/m.exec(readFileSync("/proc/pressure/cpu", "latin1"));
    if (some) pressure = `, cpu pressure avg10 ${some[1]}% avg60 ${some[2]}%`;
  } catch {
    // No PSI on this kernel.
  }
  return `load ${avg}${pressure}`;
}

interface WindowResult {
  cpuPercent: number;
  /** The tasks' cgroups' own usage over the window, % of one core (cgroup-v2 placement only). */
  cgroupPercent: number | null;
  /** Precise on-CPU ms of the processes alive at both ends (their own time, schedstat). */
  longLivedMs: number;
  switchesPerTask: number[];
  forksPerTask: number[];
  forksOnMachine: number;
  procsPerTask: number[];
  seconds: number;
  load: string;
}

/** Watches the tasks for SECONDS, looking for new processes in their groups every SAMPLE_MS. */
async function window(tasks: Task[]): Promise<WindowResult & { end: Snapshot }> {
  const a = snapshot(tasks);
  const seen = a.procs.map((ps) => new Set(ps.map(key)));
  const forks = tasks.map(() => 0);
  const endAt = a.at + SECONDS * 1000;
  while (performance.now() < endAt) {
    await new Promise((r) => setTimeout(r, Math.min(SAMPLE_MS, Math.max(0, endAt - performance.now()))));
    tasks.forEach((t, i) => {
      for (const p of outliveProcs(t)) {
        if (!seen[i].has(key(p))) {
          seen[i].add(key(p));
          forks[i]++;
        }
      }
    });
  }
  const b = snapshot(tasks);
  const sum = (xs: Proc[][], f: (p: Proc) => number) => xs.flat().reduce((s, p) => s + f(p), 0);
  const seconds = (b.at - a.at) / 1000;
  let longLivedNs = 0;
  const switchesPerTask = tasks.map((_, i) => {
    let sw = 0;
    for (const p of b.procs[i]) {
      const before = a.procs[i].find((q) => key(q) === key(p));
      if (before) {
        sw += p.switches - before.switches;
        longLivedNs += p.ns - before.ns;
      }
    }
    return sw;
  });
  return {
    cpuPercent: ((sum(b.procs, (p) => p.ticks) - sum(a.procs, (p) => p.ticks)) / TICKS / seconds) * 100,
    cgroupPercent: a.cgroupUsec !== null && b.cgroupUsec !== null ? ((b.cgroupUsec - a.cgroupUsec) / 1e6 / seconds) * 100 : null,
    longLivedMs: longLivedNs / 1e6,
    switchesPerTask,
    forksPerTask: forks,
    forksOnMachine: b.forksOnMachine - a.forksOnMachine,
    procsPerTask: b.procs.map((ps) => ps.length),
    seconds,
    load: load(),
    end: b,
  };
}

interface Held { child: ChildProcess; said: { placementReason: string; adopted: number; tasks: Array<{ id: string; pid: number }> } }

/** A supervisor in a child process of its own (this file, --role hold), once it said what it holds. */
async function hold(series: Series, storage: string, start: boolean): Promise<Held> {
  const args = [THIS_FILE, "--role", "hold", "--series", series, "--storage", storage, "--count", String(N), "--placement", values.placement!, ...(start ? ["--start"] : [])];
  const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "inherit"] });
  const line = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once("line", (l) => resolve(l));
    child.once("exit", (code) => reject(new Error(`the ${series} supervisor exited ${code} before it said what it holds`)));
  });
  return { child, said: JSON.parse(line) };
}

async function release(h: Held, how: "close" | "stop"): Promise<void> {
  const exited = new Promise((r) => h.child.once("exit", r));
  h.child.stdin!.write(`${how}\n`);
  await exited;
}

/** utime + stime of a process, clock ticks. */
function cpuTicks(pid: number): number {
  return readProc(pid)?.own ?? NaN;
}

function pss(pid: number): { pss: number; anon: number; file: number } | null {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "latin1");
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(rollup)?.[1] ?? NaN);
    return { pss: kb("Pss"), anon: kb("Pss_Anon"), file: kb("Pss_File") };
  } catch {
    return null;
  }
}

function holdsInotify(pid: number): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === "anon_inode:inotify";
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

async function waitFor(what: string, ok: () => boolean, ms = 30_000): Promise<void> {
  const until = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function commandPidOf(io: string): number | null {
  try {
    const n = Number(readFileSync(join(io, "command-pid"), "latin1").trim());
    return n > 0 ? n : null;
  } catch {
    return null;
  }
}

/** The tasks a supervisor said it holds, once each has written its command's pid. */
async function tasksOf(h: Held, storage: string): Promise<Task[]> {
  const tasks = h.said.tasks.map((t) => ({ ...t, io: join(storage, "tasks", t.id, "io"), commandPid: 0 }));
  await waitFor("every command's pid", () => tasks.every((t) => (t.commandPid = commandPidOf(t.io) ?? 0) > 0));
  return tasks;
}

interface SeriesResult {
  series: Series;
  placementReason: string;
  own: WindowResult;
  adopted: WindowResult;
  inotify: number;
  pss: { avg: number; max: number; anonAvg: number };
  supervisorOwnPercent: number;
  supervisorAdoptedPercent: number;
  supervisorEmptyPercent: number;
  adoptedCount: number;
}

const started: number[] = [];

async function measure(series: Series): Promise<SeriesResult> {
  const storage = mkdtempSync(join(tmpdir(), "outlive-bench-idle-"));
  const empty = mkdtempSync(join(tmpdir(), "outlive-bench-idle-empty-"));
  let first: Held | null = null;
  let second: Held | null = null;
  let none: Held | null = null;
  try {
    first = await hold(series, storage, true);
    started.push(...first.said.tasks.map((t) => t.pid));
    const tasks = await tasksOf(first, storage);
    if (tasks.length !== N) throw new Error(`${series}: ${tasks.length} of ${N} tasks running`);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    let s0 = cpuTicks(first.child.pid!);
    const own = await window(tasks);
    const supervisorOwnPercent = ((cpuTicks(first.child.pid!) - s0) / TICKS / own.seconds) * 100;
    const inotify = tasks.filter((t) => holdsInotify(t.pid)).length;
    const sizes = tasks.map((t, i) => {
      // The shim alone; the wrapper's processes summed (the warden's sleep only when one is there).
      const each = own.end.procs[i].map((p) => pss(p.pid)).filter((x) => x !== null);
      return { pss: each.reduce((s, x) => s + x.pss, 0), anon: each.reduce((s, x) => s + x.anon, 0) };
    });
    await release(first, "close");
    first = null;
    [second, none] = await Promise.all([hold(series, storage, false), hold(series, empty, false)]);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    s0 = cpuTicks(second.child.pid!);
    const e0 = cpuTicks(none.child.pid!);
    const adopted = await window(tasks);
    const supervisorAdoptedPercent = ((cpuTicks(second.child.pid!) - s0) / TICKS / adopted.seconds) * 100;
    const supervisorEmptyPercent = ((cpuTicks(none.child.pid!) - e0) / TICKS / adopted.seconds) * 100;
    const adoptedCount = second.said.adopted;
    const placementReason = second.said.placementReason;
    await Promise.all([release(second, "stop"), release(none, "close")]);
    second = none = null;
    return {
      series,
      placementReason,
      own,
      adopted,
      inotify,
      pss: {
        avg: sizes.reduce((s, x) => s + x.pss, 0) / sizes.length,
        max: Math.max(...sizes.map((x) => x.pss)),
        anonAvg: sizes.reduce((s, x) => s + x.anon, 0) / sizes.length,
      },
      supervisorOwnPercent,
      supervisorAdoptedPercent,
      supervisorEmptyPercent,
      adoptedCount,
    };
  } finally {
    for (const h of [first, second, none]) if (h) await release(h, "stop").catch(() => h.child.kill("SIGKILL"));
    // Whatever a failure left of the tasks started here: their groups, by the leaders' pids.
    for (const pid of started.splice(0)) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // Ended already.
      }
    }
    rmSync(storage, { recursive: true, force: true });
    rmSync(empty, { recursive: true, force: true });
  }
}

/** A lone shim's PSS: one task, through the library, with no other shim of this build running. */
async function lonePss(): Promise<{ pss: number; anon: number; file: number } | null> {
  const storage = mkdtempSync(join(tmpdir(), "outlive-bench-idle-lone-"));
  const sup = await Supervisor.open({ storage, log: () => {}, ...optionsOf("shim-inotify", 1) });
  try {
    if (!sup.placementReason.includes("outlive-shim")) return null;
    const t = await sup.run({ argv: ["sleep", "600"], timeoutSeconds: TIMEOUT_SECONDS });
    const io = join(storage, "tasks", t.id, "io");
    await waitFor("the lone task's command pid", () => commandPidOf(io) !== null);
    await new Promise((r) => setTimeout(r, 500));
    return pss(t.pid!);
  } finally {
    await sup.stopAll();
    await sup.close();
    rmSync(storage, { recursive: true, force: true });
  }
}

const stats = (xs: number[]) => `${median(xs)} (${Math.min(...xs)}–${Math.max(...xs)})`;
const pct = (x: number) => `${x.toFixed(3)}%`;

console.log(`${N} idle tasks (sleep 600, timeout ${TIMEOUT_SECONDS} s, default 32 MiB output bound, placement ${values.placement}), windows of ${SECONDS} s, ` +
  `${ROUNDS} round(s), series in rotated order: ${chosen.join(", ")}; clock tick ${1000 / TICKS} ms`);
console.log(`  at the start: ${load()}`);
const lone = existsSync("/proc/self/smaps_rollup") ? await lonePss() : null;
if (lone) console.log(`  a lone shim: PSS ${lone.pss} kB (${lone.anon} kB anonymous, ${lone.file} kB of the binary's pages, counted to it alone)`);
const results: SeriesResult[] = [];
for (let r = 0; r < ROUNDS; r++) {
  for (let k = 0; k < chosen.length; k++) {
    const series = chosen[(r + k) % chosen.length] as Series;
    const x = await measure(series);
    results.push(x);
    const w = (label: string, v: WindowResult) =>
      `    ${label}: tasks' CPU ${pct(v.cpuPercent)} of one core in all (${(v.cpuPercent / N).toFixed(4)}% a task); ` +
      (v.cgroupPercent === null ? "" : `their cgroups' cpu.stat ${pct(v.cgroupPercent)}; `) +
      `long-lived processes on CPU ${v.longLivedMs.toFixed(1)} ms in ${v.seconds.toFixed(1)} s (schedstat), context switches a task ${stats(v.switchesPerTask)}; ` +
      `forks a task ${stats(v.forksPerTask)} (every fork on the machine: ${v.forksOnMachine}); processes a task besides the command ${stats(v.procsPerTask)}; ${v.load}`;
    console.log(`  round ${r + 1}, ${series} (${x.placementReason}):`);
    console.log(w("started here", x.own));
    console.log(w("adopted     ", x.adopted));
    console.log(`    inotify instances held: ${x.inotify} of ${N}; PSS a task ${x.pss.avg.toFixed(0)} kB on average, ${x.pss.max} kB at most ` +
      `(${x.pss.anonAvg.toFixed(0)} kB anonymous)`);
    console.log(`    the supervisor's own CPU: with the ${N} it started ${pct(x.supervisorOwnPercent)}, with the ${x.adoptedCount} it adopted ` +
      `${pct(x.supervisorAdoptedPercent)}, beside an empty one's ${pct(x.supervisorEmptyPercent)} in the same window`);
  }
}

console.log(`summary, over every round and both windows (median, and the range):`);
const of = (s: Series) => results.filter((x) => x.series === s);
const windows = (s: Series) => of(s).flatMap((x) => [x.own, x.adopted]);
/**
 * The tasks' CPU: the most any of the measures says: the /proc sums (ticks, cut per process), the long-lived
 * processes' schedstat (a shim's wake-ups are far shorter than a tick), and their cgroups' cpu.stat where there is one.
 */
const cpuOfWindow = (w: WindowResult) => Math.max(w.cpuPercent, (w.longLivedMs / 1000 / w.seconds) * 100, w.cgroupPercent ?? 0);
const range = (xs: number[], f = pct) => `${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`;
const base = of("wrapper").length ? median(windows("wrapper").map(cpuOfWindow)) : NaN;
for (const s of chosen as Series[]) {
  const xs = of(s);
  const ws = windows(s);
  const cpus = ws.map(cpuOfWindow);
  const cpu = median(cpus);
  const forks = ws.flatMap((w) => w.forksPerTask);
  const procs = xs.flatMap((x) => x.own.procsPerTask);
  const pssMax = Math.max(...xs.map((x) => x.pss.max));
  const isShim = s !== "wrapper";
  const verdict = (ok: boolean) => (ok ? "ok" : "MISSED");
  const cgroup = ws.map((w) => w.cgroupPercent).filter((c): c is number => c !== null);
  console.log(
    `  ${s.padEnd(13)} CPU ${range(cpus)} of one core for ${N} tasks` +
      (cgroup.length ? ` (their cgroups' cpu.stat ${range(cgroup)})` : "") +
      (!(base > 0) || s === "wrapper" ? "" : `, ${(cpu / base).toFixed(3)}x the wrapper's`) +
      (isShim ? ` (target < ${CPU_TARGET_PERCENT}%) ${verdict(Math.max(...cpus) < CPU_TARGET_PERCENT)}` : "") +
      `; forks a task in ${SECONDS} s: ${median(forks)} (${Math.min(...forks)}–${Math.max(...forks)})` + (isShim ? ` (target 0) ${verdict(Math.max(...forks) === 0)}` : "") +
      `; processes a task besides the command: ${median(procs)} (${Math.min(...procs)}–${Math.max(...procs)})` + (isShim ? ` (target 1) ${verdict(Math.max(...procs) === 1)}` : "") +
      `; PSS a task ${median(xs.map((x) => x.pss.avg)).toFixed(0)} kB on average, at most ${pssMax} kB` + (isShim ? ` (target <= ${PSS_TARGET_KB} KiB) ${verdict(pssMax <= PSS_TARGET_KB)}` : "") +
      `; inotify instances held ${xs.map((x) => x.inotify).join(", ")} of ${N}` +
      `; the supervisor with ${N} started ${range(xs.map((x) => x.supervisorOwnPercent))}, adopted ${range(xs.map((x) => x.supervisorAdoptedPercent))}, ` +
      `an empty one ${range(xs.map((x) => x.supervisorEmptyPercent))}`,
  );
}
if (lone) console.log(`  a lone shim's PSS ${lone.pss} kB (target <= ${PSS_TARGET_KB} KiB among N; alone it carries the static binary's pages by itself)`);
console.log(`  at the end: ${load()}`);
