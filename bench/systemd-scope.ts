/**
 * Spawn-to-exit of `true` through a systemd-scope Supervisor vs a bare
 * `systemd-run [--user] --scope` with the same properties (the placement's
 * own argv), interleaved in one run. Target (issue 33): <= 1.2x. Tasks run
 * under outlive-shim; a second supervisor runs them under the shell wrapper
 * (shimPath: false) for comparison, and each is also run bare under the
 * placement's systemd-run (no supervisor), to tell the program's share from
 * the supervisor's. Needs a systemd manager, so it runs inside the container:
 *
 *   npm run build && node dist/bench/systemd-scope.js --container bookworm,trixie [--as user|root] [--rounds N]
 *
 * boots each container and runs `node /work/project/dist/bench/systemd-scope.js`
 * inside (that is also how to run it by hand where systemd is PID 1).
 */
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { newTaskId, Supervisor, SystemdScopePlacement } from "../lib/internal.ts";
import { wrapperArgv } from "../lib/spawn/wrapper.ts";
import { findShim } from "../lib/spawn/shim-path.ts";
import { taskProgram } from "../lib/spawn/task-program.ts";
import { taskPaths } from "../lib/store/layout.ts";
import type { TaskRecord } from "../lib/store/record/record.ts";
import { parseSuites, runBenchInContainer } from "./in-container.ts";
import { median, quantile } from "./quantile.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { rounds: { type: "string", default: "40" }, container: { type: "string" }, as: { type: "string", default: "user" } },
});
const TARGET = 1.2;
/** Pause before each sample, so systemd has finished with the previous unit. */
const PAUSE_MS = 50;

if (values.container) {
  let rc = 0;
  for (const suite of parseSuites(values.container)) {
    rc ||= await runBenchInContainer(suite, "systemd-scope.js", ["--rounds", values.rounds!], values.as === "root" ? "root" : "user");
  }
  process.exit(rc);
}

const ROUNDS = Number(values.rounds);
const prefix = `benchsd${process.pid}`;
const placement = new SystemdScopePlacement({ prefix });
const probe = await placement.probe();
if (!probe.ok) {
  console.log(`systemd-scope skipped: ${probe.reason} (run with --container bookworm,trixie)`);
  process.exit(0);
}



/** p10–p90: systemd-run's own time varies a lot on a small, shared machine, so the spread is printed with the medians. */
function spread(xs: number[]): string {
  return `p10-p90 ${quantile(xs, 0.1).toFixed(1)}-${quantile(xs, 0.9).toFixed(1)}`;
}

/**
 * The placement's own systemd-run argv for a fresh unit, running `true`
 * directly (the baseline), or through outlive's wrapper exactly as a task
 * does but with no supervisor (to tell the wrapper's share from the
 * supervisor's bookkeeping).
 */
const shimPath = findShim().path;
const programDir = mkdtempSync(join(tmpdir(), "outlive-bench-sd-program-"));
let programSerial = 0;

async function bare(wrapped: false | "wrapper" | "shim" = false): Promise<number> {
  const id = newTaskId();
  const plan = await placement.plan({ id, backstopSeconds: 86_460, memoryMaxBytes: null });
  let command = ["true"];
  let stdin: Buffer | null = null;
  if (wrapped === "wrapper") {
    command = wrapperArgv({ command: { argv: ["true"] }, enterCgroupProcs: null, deadlineSeconds: 86_400, graceMs: 2000, timedOutFile: "/dev/null" });
  } else if (wrapped === "shim") {
    // The shim as a task gets it (lib/spawn/task-program.ts), in a task directory of its own: its settings on stdin.
    const paths = taskPaths(programDir, `p${programSerial++}`);
    mkdirSync(paths.io, { recursive: true });
    const record = { id, command: { argv: ["true"] }, pty: null, maxOutputBytes: 32 * 1024 * 1024 } as unknown as TaskRecord;
    const program = taskProgram({
      record, paths, shim: shimPath, enterCgroupProcs: plan.enterCgroupProcs, deadlineSeconds: 86_400, graceMs: 2000, watch: "inotify", env: process.env,
    });
    command = program.argv;
    stdin = program.stdin;
  }
  // The shim keeps its code in a regular file (io/exit, as a task's); the wrapper's fd 3 may be /dev/null.
  const markerPath = wrapped === "shim" ? join(programDir, `exit-${programSerial}`) : "/dev/null";
  const marker = openSync(markerPath, "w");
  const t0 = performance.now();
  const code = await new Promise((r) => {
    const child = spawn(plan.prefix[0], [...plan.prefix.slice(1), ...command], { stdio: [stdin ? "pipe" : "ignore", "ignore", "ignore", marker] });
    if (stdin) {
      child.stdin!.on("error", () => {});
      child.stdin!.end(stdin);
    }
    child.once("exit", r);
  });
  const ms = performance.now() - t0;
  closeSync(marker);
  if (code !== 0) throw new Error(`bare systemd-run (${wrapped || "true"}) exited ${code}`);
  return ms;
}

/**
 * The other way a task could start (issue 24: a fork systemd itself makes,
 * outside the supervisor's cgroup): a transient service of `true`, with the
 * scope's properties, `--wait`ed for until it ends. ExitType=cgroup keeps the
 * unit until every process in it has ended, as a scope does.
 */
async function bareService(): Promise<number> {
  const plan = await placement.plan({ id: newTaskId(), backstopSeconds: 86_460, memoryMaxBytes: null });
  const argv = plan.prefix
    .filter((a) => a !== "--scope")
    .map((a) => (a.startsWith("--unit=") ? a.replace(/\.scope$/, ".service") : a));
  const t0 = performance.now();
  const code = await new Promise((r) =>
    spawn(argv[0], [...argv.slice(1), "--wait", "--service-type=exec", "-p", "ExitType=cgroup", "true"], { stdio: "ignore" }).once("exit", r));
  const ms = performance.now() - t0;
  if (code !== 0) throw new Error(`bare systemd-run (service) exited ${code}`);
  return ms;
}

async function through(sup: Supervisor): Promise<number> {
  const t0 = performance.now();
  const task = await sup.run({ argv: ["true"] });
  const done = await sup.wait(task.id);
  const ms = performance.now() - t0;
  if (done.state !== "exited" || done.exitCode !== 0) throw new Error(`task ended ${done.state}: ${done.reason}`);
  return ms;
}

const storage = mkdtempSync(join(tmpdir(), "outlive-bench-sd-"));
const sup = await Supervisor.open({ storage, placement: "systemd-scope", mode: "daemon", prefix, log: () => {} });
// The same under the shell wrapper, for comparison.
const storageWrapped = mkdtempSync(join(tmpdir(), "outlive-bench-sd-"));
const wrappedSup = await Supervisor.open({ storage: storageWrapped, placement: "systemd-scope", mode: "daemon", prefix, log: () => {}, shimPath: false });
// The same with the supervisor forking (spawner: false), to tell what the spawner costs.
const storageHere = mkdtempSync(join(tmpdir(), "outlive-bench-sd-"));
const here = await Supervisor.open({ storage: storageHere, placement: "systemd-scope", mode: "daemon", prefix, log: () => {}, spawner: false });
const forkedHere: number[] = [];
const base: number[] = [];
const wrapped: number[] = [];
const shimmed: number[] = [];
const ours: number[] = [];
const oursWrapped: number[] = [];
const service: number[] = [];
try {
  for (let i = 0; i < 5; i++) {
    await bare();
    await bare("wrapper");
    if (shimPath) await bare("shim");
    await bareService();
    await through(sup);
    await through(wrappedSup);
    await through(here);
  }
  // Each sample follows the one before it while systemd still tears that unit down, so the
  // order is rotated every round and each sample starts after a pause: no variant always goes first.
  const samples: Array<() => Promise<void>> = [
    async () => void base.push(await bare()),
    async () => void wrapped.push(await bare("wrapper")),
    ...(shimPath ? [async () => void shimmed.push(await bare("shim"))] : []),
    async () => void ours.push(await through(sup)),
    async () => void oursWrapped.push(await through(wrappedSup)),
    async () => void service.push(await bareService()),
    async () => void forkedHere.push(await through(here)),
  ];
  for (let i = 0; i < ROUNDS; i++) {
    for (let k = 0; k < samples.length; k++) {
      await new Promise((r) => setTimeout(r, PAUSE_MS));
      await samples[(i + k) % samples.length]();
    }
  }
} finally {
  await sup.close();
  await wrappedSup.close();
  await here.close();
  rmSync(storage, { recursive: true, force: true });
  rmSync(storageWrapped, { recursive: true, force: true });
  rmSync(programDir, { recursive: true, force: true });
  rmSync(storageHere, { recursive: true, force: true });
}
const ratio = median(ours) / median(base);
console.log(`systemd-scope spawn-to-exit of \`true\`, median of ${ROUNDS} (interleaved, order rotated, ${PAUSE_MS} ms apart), ${probe.reason}; ` +
  `load ${readFileSync("/proc/loadavg", "latin1").split(" ").slice(0, 3).join(" ")}; ${sup.placementReason}`);
console.log(
  `  outlive ${median(ours).toFixed(2)} ms (${spread(ours)}) vs bare systemd-run --scope ${median(base).toFixed(2)} ms (${spread(base)}): ` +
    `${ratio.toFixed(2)}x (target <= ${TARGET}x) ${ratio <= TARGET ? "ok" : "MISSED"}`,
);
console.log(
  `  of which the spawner (the fork made outside the supervisor's cgroup): the supervisor forking itself (spawner: false) ` +
    `${median(forkedHere).toFixed(2)} ms (${spread(forkedHere)}), ${(median(forkedHere) / median(base)).toFixed(2)}x the bare scope`,
);
if (shimPath) {
  console.log(
    `  of which outlive's shim (its settings, deadline, output bound, exit marker): bare systemd-run --scope of the shim ${median(shimmed).toFixed(2)} ms ` +
      `(${(median(shimmed) / median(base)).toFixed(2)}x); the supervisor's records, placement checks and observation: ${(median(ours) - median(shimmed)).toFixed(2)} ms`,
  );
}
console.log(
  `  under the shell wrapper (shimPath: false): outlive ${median(oursWrapped).toFixed(2)} ms (${spread(oursWrapped)}), ${(median(oursWrapped) / median(base)).toFixed(2)}x; ` +
    `bare systemd-run --scope of the wrapper ${median(wrapped).toFixed(2)} ms (${(median(wrapped) / median(base)).toFixed(2)}x)`,
);
console.log(
  `  a transient service instead (bare systemd-run --wait --service-type=exec -p ExitType=cgroup true): ${median(service).toFixed(2)} ms ` +
    `(${spread(service)}), ${(median(service) / median(base)).toFixed(2)}x the bare scope`,
);
console.log(`  argv: ${(await placement.plan({ id: "t-example", backstopSeconds: 86_460, memoryMaxBytes: null })).prefix.join(" ")} …`);
