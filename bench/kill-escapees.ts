/**
 * Kill of a task with 50 processes, 10 of which escaped its process group
 * (5 with setsid, 5 with a double fork), and 29 of the rest ignore TERM:
 * the time from kill() until every one of them is gone, per placement.
 * Target for cgroup-v2 and systemd-scope: within grace + 100 ms. For
 * process-group, what it leaves behind (then ended here, by pid).
 *
 *   npm run build && node dist/bench/kill-escapees.js [--rounds N] [--grace MS]
 *       (cgroup-v2 and process-group here; root for cgroup-v2)
 *   node dist/bench/kill-escapees.js --container bookworm,trixie [--as user|root]
 *       (boots the systemd container and runs the same file inside, for systemd-scope)
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { waitUntil } from "../lib/kill/process-group.ts";
import { isRunning, readProcStat, Supervisor } from "../lib/internal.ts";
import { workingPlacements } from "./placements.ts";
import { parseSuites, runBenchInContainer } from "./in-container.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    rounds: { type: "string", default: "5" },
    grace: { type: "string", default: "500" },
    container: { type: "string" },
    as: { type: "string", default: "user" },
  },
});
const ROUNDS = Number(values.rounds);
const GRACE_MS = Number(values.grace);
const SLACK_MS = 100;
const PROCESSES = 50;

if (values.container) {
  let rc = 0;
  for (const suite of parseSuites(values.container)) {
    const args = ["--rounds", String(ROUNDS), "--grace", String(GRACE_MS)];
    rc ||= await runBenchInContainer(suite, "kill-escapees.js", args, values.as === "root" ? "root" : "user");
  }
  process.exit(rc);
}

/**
 * The task's own shell plus 49 more: 20 plain sleeps and 19 that ignore
 * TERM (an ignored signal stays ignored across exec) in its group, then 10
 * escapees that ignore TERM as well and record their pids.
 */
function script(pidFile: string): string {
  const escapee = `sh -c 'trap "" TERM; echo $$ >> ${pidFile}; exec sleep 300'`;
  return [
    "for i in $(seq 20); do sleep 300 & done",
    `for i in $(seq 19); do sh -c 'trap "" TERM; exec sleep 300' & done`,
    `for i in 1 2 3 4 5; do setsid ${escapee} & done`,
    `for i in 1 2 3 4 5; do ( ${escapee} & ) ; done`,
    "wait",
  ].join("\n");
}

/** Every process of the task: its group (the wrapper and its warden included) and the escapees. */
function taskPids(pgid: number, pidFile: string): number[] {
  const group = readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number).filter((pid) => readProcStat(pid)?.pgid === pgid);
  let escaped: number[] = [];
  try {
    escaped = readFileSync(pidFile, "utf8").trim().split("\n").filter(Boolean).map(Number);
  } catch {
    // none yet
  }
  return [...new Set([...group, ...escaped])];
}

interface Round {
  goneMs: number | null;
  left: number;
  /** Of those left, how many lead a session of their own (setsid). */
  setsid: number;
  how: string;
}

async function round(sup: Supervisor, storage: string, n: number): Promise<Round> {
  const pidFile = join(storage, `escaped-${n}`);
  const t = await sup.run({ shell: script(pidFile) });
  let pids: number[] = [];
  const ready = await waitUntil(() => {
    pids = taskPids(t.pgid!, pidFile);
    // 50 of the task's own, plus the wrapper, its warden and the warden's sleep.
    return pids.length >= PROCESSES + 3 && pids.every(isRunning);
  }, 10_000, 20);
  if (!ready) throw new Error(`only ${pids.length} of ${PROCESSES} processes started`);
  const t0 = performance.now();
  const { how } = await sup.kill(t.id, { graceMs: GRACE_MS });
  const gone = await waitUntil(() => !pids.some(isRunning), GRACE_MS + 3000, 1);
  const goneMs = gone ? performance.now() - t0 : null;
  const left = pids.filter(isRunning);
  const setsid = left.filter((pid) => readProcStat(pid)?.sid === pid).length;
  for (const pid of left) process.kill(pid, "SIGKILL");
  return { goneMs, left: left.length, setsid, how };
}

const prefix = `benchke${process.pid}`;
console.log(`kill of a task with ${PROCESSES} processes (10 escaped: 5 setsid, 5 double fork; 29 ignore TERM), grace ${GRACE_MS} ms, ${ROUNDS} rounds`);
for (const name of await workingPlacements(prefix, "  ")) {
  const storage = mkdtempSync(join(tmpdir(), "outlive-bench-kill-"));
  const sup = await Supervisor.open({ storage, placement: name, mode: "daemon", prefix, log: () => {} });
  const rounds: Round[] = [];
  try {
    for (let i = 0; i < ROUNDS; i++) rounds.push(await round(sup, storage, i));
  } finally {
    await sup.close();
    rmSync(storage, { recursive: true, force: true });
  }
  const times = rounds.map((r) => r.goneMs);
  if (name === "process-group") {
    const left = rounds.map((r) => `${r.left} (${r.setsid} setsid)`);
    console.log(
      `  ${name.padEnd(14)} left ${left.join(", ")} of ${PROCESSES} processes running after kill() returned, ended here by pid ` +
        "(a double fork keeps the process group id, so the group kill reaches those; a new session does not)",
    );
    continue;
  }
  const worst = Math.max(...times.map((t) => t ?? Infinity));
  const target = GRACE_MS + SLACK_MS;
  console.log(
    `  ${name.padEnd(14)} all gone after ${times.map((t) => (t === null ? "NEVER" : t.toFixed(0))).join(", ")} ms ` +
      `(worst ${worst.toFixed(0)} ms; target <= grace + ${SLACK_MS} = ${target} ms) ${worst <= target ? "ok" : "MISSED"}; ladder: ${rounds[0].how}`,
  );
}
