// Replay of many records (mixed states) at Supervisor.open, per record.
// Run: npx tsc -p tsconfig.json && node dist/bench/replay.js [--records N]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { bootId, SCHEMA_VERSION, Supervisor, type TaskRecord, taskPaths } from "../lib/mod.ts";

const { values } = parseArgs({ args: process.argv.slice(2), options: { records: { type: "string", default: "10000" } } });
const N = Number(values.records);
const TARGET_US = 100;

/** Mixed states as a long-lived storage holds them: mostly finished, some ended while down, some lost. */
function makeStorage(n: number): string {
  const root = mkdtempSync(join(tmpdir(), "outlive-bench-replay-"));
  const boot = bootId();
  const now = Date.now();
  for (let i = 0; i < n; i++) {
    const id = `t-${i.toString(16).padStart(16, "0")}`;
    const p = taskPaths(root, id);
    mkdirSync(p.io, { recursive: true, mode: 0o700 });
    const kind = i % 10; // 0-6 terminal, 7-8 ended while down with a marker, 9 vanished without one
    const record: TaskRecord = {
      schemaVersion: SCHEMA_VERSION, id, key: null, generation: null, command: { argv: ["make", "-j4"] }, cwd: "/",
      state: kind < 7 ? "exited" : "running", exitCode: kind < 7 ? 0 : null, reason: kind < 7 ? "exited with code 0" : null,
      createdAt: new Date(now - (n - i) * 1000).toISOString(), startedAt: new Date(now - (n - i) * 1000).toISOString(),
      finishedAt: kind < 7 ? new Date(now).toISOString() : null, lastOutputAt: null, outputTail: kind < 7 ? "ok\n" : null,
      timeoutSeconds: null, deadlineAt: new Date(now + 86400_000).toISOString(), deadlineIsTimeout: false, memoryMaxBytes: null,
      // A pid far above pid_max on this machine: no such process, as after a task ended.
      pid: 4_000_000 + i, pgid: 4_000_000 + i, startTime: "12345", bootId: boot, incarnation: "i-bench-gone",
      supervisorCgroup: "/bench", placement: "process-group", location: { cgroup: "/bench-task" },
      killStartedAt: null, killReason: null, killState: null, acknowledgedAt: kind < 7 ? new Date(now).toISOString() : null,
    };
    writeFileSync(p.record, JSON.stringify(record), { mode: 0o600 });
    writeFileSync(p.exit, kind === 7 || kind === 8 ? "0\n" : kind === 9 ? "" : "0\n", { mode: 0o600 });
    writeFileSync(p.stdout, "built\n", { mode: 0o600 });
  }
  return root;
}

const root = makeStorage(N);
if (process.env.KEEP) console.log("storage", root);
const t0 = performance.now();
const sup = await Supervisor.open({ storage: root, placement: "process-group", log: () => {} });
const ms = performance.now() - t0;
const r = sup.replayReport;
await sup.close();
if (!process.env.KEEP) rmSync(root, { recursive: true, force: true }); else console.log(root);
const perRecord = (ms * 1000) / N;
console.log(`replay of ${N} records: ${ms.toFixed(0)} ms, ${perRecord.toFixed(1)} µs per record (target <= ${TARGET_US} µs) ${perRecord <= TARGET_US ? "ok" : "MISSED"}`);
console.log(`  unchanged ${r.unchanged.length}, finished ${r.finished.length}, adopted ${r.adopted.length}, deferred ${r.deferred.length}`);
