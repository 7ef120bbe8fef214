// Replay of many records (mixed states) at Supervisor.open, per record.
// Run: npm run build && node dist/bench/replay.js [--records N]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { bootId, SCHEMA_VERSION, Supervisor, type TaskRecord, taskPaths } from "../lib/internal.ts";
import { syncFileSystem } from "../lib/store/write/atomic-batch.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    records: { type: "string", default: "10000" },
    /** Share of records that ended while no supervisor ran, and so need a durable write at replay. */
    "ended-share": { type: "string", default: "0.3" },
  },
});
const N = Number(values.records);
const TARGET_US = 50;

/** Mixed states as a long-lived storage holds them: mostly finished, some ended while down, some lost. */
function makeStorage(n: number, endedShare: number): string {
  const root = mkdtempSync(join(tmpdir(), "outlive-bench-replay-"));
  const boot = bootId();
  const now = Date.now();
  for (let i = 0; i < n; i++) {
    const id = `t-${i.toString(16).padStart(16, "0")}`;
    const p = taskPaths(root, id);
    mkdirSync(p.io, { recursive: true, mode: 0o700 });
    // Terminal already, or (the ended share) ended while down: two in three with an exit marker, one without.
    const ended = (i % 100) < endedShare * 100;
    const kind = !ended ? "terminal" : i % 3 === 0 ? "vanished" : "ended-with-marker";
    const terminal = kind === "terminal";
    const record: TaskRecord = {
      schemaVersion: SCHEMA_VERSION, id, key: null, generation: null, command: { argv: ["make", "-j4"] }, cwd: "/",
      state: terminal ? "exited" : "running", exitCode: terminal ? 0 : null, reason: terminal ? "exited with code 0" : null,
      createdAt: new Date(now - (n - i) * 1000).toISOString(), startedAt: new Date(now - (n - i) * 1000).toISOString(),
      finishedAt: terminal ? new Date(now).toISOString() : null, lastOutputAt: null, outputTail: terminal ? "ok\n" : null,
      timeoutSeconds: null, deadlineAt: new Date(now + 86400_000).toISOString(), deadlineIsTimeout: false, memoryMaxBytes: null,
      // A pid far above pid_max on this machine: no such process, as after a task ended.
      pid: 4_000_000 + i, pgid: 4_000_000 + i, startTime: "12345", bootId: boot, incarnation: "i-bench-gone",
      supervisorCgroup: "/bench", placement: "process-group", location: { cgroup: "/bench-task" },
      killStartedAt: null, killReason: null, killState: null, acknowledgedAt: terminal ? new Date(now).toISOString() : null,
    };
    writeFileSync(p.record, JSON.stringify(record), { mode: 0o600 });
    writeFileSync(p.exit, kind === "vanished" ? "" : "0\n", { mode: 0o600 });
    writeFileSync(p.stdout, "built\n", { mode: 0o600 });
  }
  return root;
}

async function replayOnce(endedShare: number): Promise<{ perRecord: number; ms: number; finished: number; unchanged: number }> {
  const root = makeStorage(N, endedShare);
  // The set-up's own writes are flushed before the clock starts, so replay does not pay for them.
  await syncFileSystem(root);
  if (process.env.KEEP) console.log("storage", root);
  const t0 = performance.now();
  // retention: false: this measures replay, not the pruning of the acknowledged records it is given.
  const sup = await Supervisor.open({ storage: root, placement: "process-group", retention: false, log: () => {} });
  const ms = performance.now() - t0;
  const r = sup.replayReport;
  await sup.close();
  if (!process.env.KEEP) rmSync(root, { recursive: true, force: true });
  return { perRecord: (ms * 1000) / N, ms, finished: r.finished.length, unchanged: r.unchanged.length };
}

const share = Number(values["ended-share"]);
const allTerminal = await replayOnce(0);
const mixed = await replayOnce(share);
const verdict = (us: number) => (us <= TARGET_US ? "ok" : "MISSED");
console.log(`replay of ${N} records at Supervisor.open (target <= ${TARGET_US} µs per record):`);
console.log(`  all terminal already:            ${allTerminal.ms.toFixed(0)} ms, ${allTerminal.perRecord.toFixed(1)} µs per record ${verdict(allTerminal.perRecord)}`);
console.log(
  `  ${(share * 100).toFixed(0)}% ended while down (durable write each): ${mixed.ms.toFixed(0)} ms, ${mixed.perRecord.toFixed(1)} µs per record ${verdict(mixed.perRecord)} ` +
    `(${mixed.finished} finished, ${mixed.unchanged} unchanged; ${(((mixed.ms - allTerminal.ms) * 1000) / Math.max(1, mixed.finished)).toFixed(0)} µs per finished record)`,
);
