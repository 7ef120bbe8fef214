// Open of a storage that has seen 100,000 finished tasks under the default retention, against the
// open of an empty storage in the same run. Target: <= 1 s.
// Run: npm run build && node dist/bench/retention-open.js [--tasks 100000] [--batches 10]
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { bootId, DEFAULT_RETENTION, SCHEMA_VERSION, Supervisor, type TaskRecord, taskPaths } from "../lib/internal.ts";
import { syncFileSystem } from "../lib/store/write/atomic-batch.ts";
import { median } from "./quantile.ts";

const { values } = parseArgs({ args: process.argv.slice(2), options: { tasks: { type: "string", default: "100000" }, batches: { type: "string", default: "10" } } });
const TASKS = Number(values.tasks);
const BATCHES = Number(values.batches);
const TARGET_MS = 1000;
const boot = bootId();

/** `n` finished, acknowledged tasks as a host leaves them: record, output, exit marker; one incarnation per 100 (a CLI call or a restart each). */
function addFinished(root: string, from: number, n: number): void {
  const now = Date.now();
  for (let i = from; i < from + n; i++) {
    const id = `t-${i.toString(16).padStart(16, "0")}`;
    const incarnation = `i-bench-${Math.floor(i / 100).toString(36)}`;
    if (i % 100 === 0) {
      writeFileSync(join(root, "incarnations", `${incarnation}.json`), JSON.stringify({ id: incarnation, pid: 4_000_000, startTime: "1", cgroup: null, bootId: boot, startedAt: new Date(now).toISOString() }), { mode: 0o600 });
    }
    const p = taskPaths(root, id);
    mkdirSync(p.io, { recursive: true, mode: 0o700 });
    const at = new Date(now - (from + n - i) * 10).toISOString();
    const record: TaskRecord = {
      schemaVersion: SCHEMA_VERSION, id, key: null, generation: null, command: { argv: ["make", "test"] }, cwd: "/",
      state: "exited", exitCode: 0, reason: "exited with code 0", createdAt: at, startedAt: at, finishedAt: at, lastOutputAt: at,
      outputTail: "ok\n", timeoutSeconds: null, deadlineAt: new Date(now + 86400_000).toISOString(), deadlineIsTimeout: false,
      memoryMaxBytes: null, pid: 4_000_000 + (i % 100_000), pgid: 4_000_000 + (i % 100_000), startTime: "12345", bootId: boot,
      incarnation, supervisorCgroup: null, placement: "process-group", location: {}, killStartedAt: null, killReason: null,
      killState: null, acknowledgedAt: at,
    };
    writeFileSync(p.record, JSON.stringify(record), { mode: 0o600 });
    writeFileSync(p.exit, "0\n", { mode: 0o600 });
    writeFileSync(p.stdout, "ok\n", { mode: 0o600 });
    writeFileSync(p.stderr, "", { mode: 0o600 });
  }
}

/** One life of the host: an open (timed), then, for a long-lived one, until the removed tasks' files are deleted (timed apart). */
async function timeOpen(root: string, livesLong = false): Promise<{ ms: number; deleteMs: number }> {
  await syncFileSystem(root);
  const t0 = performance.now();
  const sup = await Supervisor.open({ storage: root, placement: "process-group", control: false, log: () => {} });
  const ms = performance.now() - t0;
  const t1 = performance.now();
  while (livesLong && existsSync(join(root, "removing")) && readdirSync(join(root, "removing")).length > 0) await new Promise((r) => setTimeout(r, 50));
  const deleteMs = performance.now() - t1;
  await sup.close();
  return { ms, deleteMs };
}

const empty = mkdtempSync(join(tmpdir(), "outlive-bench-retention-empty-"));
const root = mkdtempSync(join(tmpdir(), "outlive-bench-retention-"));
try {
  await (await Supervisor.open({ storage: root, control: false, log: () => {} })).close();
  // The host restarts now and then: after each batch of finished tasks, an open prunes by the default retention.
  // Each life lives long enough to delete what its open pruned (as a module does; a CLI command's close gives it 2 s).
  const catchUps: number[] = [];
  const deletes: number[] = [];
  const perBatch = Math.ceil(TASKS / BATCHES);
  for (let b = 0; b < BATCHES; b++) {
    addFinished(root, b * perBatch, Math.min(perBatch, TASKS - b * perBatch));
    const life = await timeOpen(root, true);
    catchUps.push(life.ms);
    deletes.push(life.deleteMs);
  }
  const baseline: number[] = [];
  const steady: number[] = [];
  for (let i = 0; i < 7; i++) {
    baseline.push((await timeOpen(empty)).ms);
    steady.push((await timeOpen(root)).ms);
  }
  const left = readdirSync(join(root, "tasks")).filter((n) => !n.startsWith(".")).length;
  const incarnations = readdirSync(join(root, "incarnations")).length;
  const aside = readdirSync(join(root, "removing")).length;
  const du = execFileSync("du", ["-sk", root], { encoding: "utf8" }).split("\t")[0];
  const m = median(steady);
  const b = median(baseline);
  console.log(`open of a storage that has seen ${TASKS} finished tasks under the default retention (keep ${DEFAULT_RETENTION.keep}), target <= ${TARGET_MS} ms:`);
  console.log(`  baseline, open of an empty storage:   median ${b.toFixed(1)} ms`);
  console.log(`  after ${TASKS} tasks:                   median ${m.toFixed(1)} ms  (${(m / b).toFixed(1)}x the baseline)  ${m <= TARGET_MS ? "OK" : "OVER TARGET"}`);
  console.log(`  left on disk: ${left} tasks, ${incarnations} incarnation files, ${aside} removed tasks not yet deleted, ${du} KiB`);
  console.log(`  catch-up opens, each pruning a batch of ${perBatch}: median ${median(catchUps).toFixed(0)} ms, max ${Math.max(...catchUps).toFixed(0)} ms;`);
  console.log(`  then deleting their files in the background: median ${median(deletes).toFixed(0)} ms (${(median(deletes) / perBatch).toFixed(2)} ms a task)`);
} finally {
  rmSync(root, { recursive: true, force: true });
  rmSync(empty, { recursive: true, force: true });
}
