// What a census costs: one /proc snapshot of about 2,000 processes vs
// `ps -axww -o pid=,ppid=,pgid=,stat=,args=` plus parsing, and vs the
// ps-list and pidtree packages, all in the same run; then one mayRetireIdle
// against a launch record of 20 servers; then the census with the cgroup
// source (root with cgroup v2 only): a harness in a task cgroup of its own,
// and the worst case, every sleeper in the leader's cgroup.
// Run: npm run build && node dist/bench/census.js
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import psList from "ps-list";
import pidtree from "pidtree";
import {
  mayRetireIdle,
  parsePsOutput,
  PS_ARGS,
  readLaunchRecord,
  takeCensus,
  takeSnapshot,
  underLeader,
  type LaunchRecord,
} from "../lib/census/mod.ts";
import { waitUntil } from "../lib/kill/process-group.ts";
import { cgroupPopulated, cgroupWritable, findCgroup2Mount } from "../lib/placement/cgroup-fs.ts";
import { readProcStat } from "../lib/proc/stat.ts";

const SLEEPERS = 2_000;
const SHELLS = 20;
const SERVERS = 20;
const ROUNDS = 15;
const WARMUP = 3;
const TARGET_RATIO = 0.5;

const run = promisify(execFile);

async function median(label: string, work: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < WARMUP; i++) await work();
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const start = performance.now();
    await work();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const mid = times[Math.floor(times.length / 2)];
  console.log(`${label.padEnd(48)} median ${mid.toFixed(2).padStart(8)} ms   (min ${times[0].toFixed(2)}, max ${times[times.length - 1].toFixed(2)})`);
  return mid;
}

/**
 * Two measurements taken in alternating rounds, so the load of a shared
 * machine drifts over both alike; the ratio is the median of the per-round ratios.
 */
async function paired(label: string, work: () => Promise<unknown>, baseline: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < WARMUP; i++) {
    await work();
    await baseline();
  }
  const ratios: number[] = [];
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    let start = performance.now();
    await work();
    ours.push(performance.now() - start);
    start = performance.now();
    await baseline();
    theirs.push(performance.now() - start);
    ratios.push(ours[i] / theirs[i]);
  }
  const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`${label.padEnd(48)} median ${mid(ours).toFixed(2).padStart(8)} ms vs ps + parse ${mid(theirs).toFixed(2)} ms, per-round ratio median ${mid(ratios).toFixed(3)}x`);
  return mid(ratios);
}

/** The cgroups of this run, when this process may make them: a harness's task cgroup, and one for every sleeper. */
const mount = findCgroup2Mount();
const cgroupSkip = mount === null ? "no cgroup v2 hierarchy is mounted" : cgroupWritable(mount);
const base = mount && `${mount}/benchcensus${process.pid}`;
const harnessCgroup = base && `${base}/bench-task-t-harness`;
const sleepersCgroup = base && `${base}/bench-task-t-sleepers`;
if (!cgroupSkip) for (const dir of [base!, harnessCgroup!, sleepersCgroup!]) mkdirSync(dir);
const enter = (dir: string | null) => (cgroupSkip || !dir ? "" : `echo $$ > ${dir}/cgroup.procs; `);

/** Shells that each start a share of the sleepers and wait; their pids are how everything is ended. */
function startSleepers(): number[] {
  const per = SLEEPERS / SHELLS;
  const shells: number[] = [];
  for (let s = 0; s < SHELLS; s++) {
    const child = spawn("sh", ["-c", `${enter(sleepersCgroup)}i=0; while [ $i -lt ${per} ]; do sleep 900 & i=$((i+1)); done; wait`], { stdio: "ignore", detached: true });
    shells.push(child.pid!);
  }
  return shells;
}

/** A stand-in harness with SERVERS servers as direct children (`sleep 9001` … `sleep 9020`). */
function startHarness(): number {
  const script = enter(harnessCgroup) + Array.from({ length: SERVERS }, (_, i) => `sleep ${9001 + i} &`).join(" ") + " wait";
  return spawn("sh", ["-c", script], { stdio: "ignore", detached: true }).pid!;
}

async function waitForCount(parents: number[], want: number): Promise<void> {
  const set = new Set(parents);
  const started = async () => (await takeSnapshot()).processes.filter((p) => set.has(p.ppid) && p.argv[0] === "sleep").length >= want;
  if (!(await waitUntil(started, 30_000, 50))) throw new Error(`only some of the ${want} sleepers started`);
}

async function endAll(parents: number[]): Promise<number> {
  const set = new Set(parents);
  const snap = await takeSnapshot();
  const pids = [...parents, ...snap.processes.filter((p) => set.has(p.ppid)).map((p) => p.pid)];
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
  return pids.length;
}

async function main(): Promise<void> {
  const shells = startSleepers();
  const harness = startHarness();
  try {
    await waitForCount(shells, SLEEPERS);
    await waitForCount([harness], SERVERS);
    const total = (await takeSnapshot()).processes.length;
    console.log(`processes on the machine: ${total} (${SLEEPERS} sleepers started for this run)\n`);

    const ours = await median("census takeSnapshot (/proc)", () => takeSnapshot());
    const ps = await median("ps -axww -o … + parsePsOutput", async () => parsePsOutput((await run("ps", [...PS_ARGS], { maxBuffer: 64 << 20 })).stdout));
    const viaPs = await median("census takeSnapshot({ source: \"ps\" })", () => takeSnapshot({ source: "ps" }));
    const list = await median("ps-list (all processes)", () => psList());
    const tree = await median("pidtree(-1) (all pids, no argv)", () => pidtree(-1));

    const servers = Array.from({ length: SERVERS }, (_, i) => ({ name: `s${i + 1}`, command: "sleep", args: [String(9001 + i)] }));
    const record: LaunchRecord = await readLaunchRecord({ agent: "other", cwd: "/", env: { PATH: process.env.PATH }, servers });
    const leader = { pid: harness, startTime: readProcStat(harness)!.startTime };
    const first = await mayRetireIdle(leader, record);
    if (first.verdict !== "retire") throw new Error(`expected retire, got ${JSON.stringify(first)}`);
    console.log("");
    const idle = await median(`mayRetireIdle, ${SERVERS} servers (own snapshot)`, () => mayRetireIdle(leader, record));
    const snapshot = await takeSnapshot();
    const decideOnly = await median(`mayRetireIdle, ${SERVERS} servers (given snapshot)`, () => mayRetireIdle(leader, record, { snapshot }));
    await median("underLeader alone (given snapshot)", async () => underLeader(snapshot, leader));

    let withCgroup: number | null = null;
    let allInCgroup: number | null = null;
    if (cgroupSkip) console.log(`\ncgroup source: skipped: ${cgroupSkip}`);
    else {
      console.log("");
      const check = await takeCensus(leader);
      if (!check.ok || check.census.sources.cgroup === null) throw new Error(`the cgroup source was not used: ${JSON.stringify(check)}`);
      const psParse = async () => parsePsOutput((await run("ps", [...PS_ARGS], { maxBuffer: 64 << 20 })).stdout);
      withCgroup = await paired(`takeCensus, cgroup source (${SERVERS} in the cgroup)`, () => takeCensus(leader), psParse);
      const head = { pid: shells[0], startTime: readProcStat(shells[0])!.startTime };
      const all = await takeCensus(head);
      const inIt = all.ok ? all.census.members.length : 0;
      if (inIt < SLEEPERS) throw new Error(`expected the ${SLEEPERS} sleepers under the leader, got ${inIt}`);
      allInCgroup = await paired(`takeCensus, cgroup source (${inIt} in the cgroup)`, () => takeCensus(head), psParse);
    }

    console.log("\nratios (lower is better; target census/ps <= " + TARGET_RATIO + "):");
    const ratio = (a: number, b: number) => (a / b).toFixed(3) + "x";
    console.log(`  census snapshot / (ps + parse)      ${ratio(ours, ps)}  ${ours / ps <= TARGET_RATIO ? "meets target" : "MISSES target"}`);
    console.log(`  census snapshot / ps-list           ${ratio(ours, list)}`);
    console.log(`  census snapshot / pidtree           ${ratio(ours, tree)}`);
    console.log(`  census ps fallback / (ps + parse)   ${ratio(viaPs, ps)}`);
    if (withCgroup !== null && allInCgroup !== null) {
      console.log(`  census + cgroup / (ps + parse)      ${withCgroup.toFixed(3)}x  ${withCgroup <= TARGET_RATIO ? "meets target" : "MISSES target"} (paired rounds)`);
      console.log(`  census + cgroup, all in it / ps     ${allInCgroup.toFixed(3)}x  ${allInCgroup <= TARGET_RATIO ? "meets target" : "MISSES target"} (paired rounds)`);
    }
    console.log(`  decision on a given snapshot        ${decideOnly.toFixed(3)} ms; with its own snapshot ${idle.toFixed(2)} ms`);
  } finally {
    const ended = await endAll([...shells, harness]);
    console.log(`\nended ${ended} processes by pid`);
    if (!cgroupSkip) await removeCgroups();
  }
}

async function removeCgroups(): Promise<void> {
  for (const dir of [harnessCgroup!, sleepersCgroup!]) {
    if (!existsSync(dir)) continue;
    writeFileSync(join(dir, "cgroup.kill"), "1");
    await waitUntil(async () => !(await cgroupPopulated(dir)), 10_000, 20);
    await waitUntil(() => {
      try {
        rmdirSync(dir);
        return true;
      } catch {
        return false;
      }
    }, 10_000, 50);
  }
  rmdirSync(base!);
}

await main();
