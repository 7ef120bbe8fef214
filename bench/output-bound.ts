// Throughput of a task writing 1 GiB to stdout with the output bound (the
// default 32 MiB) against the same task with no bound, in one run, and the
// disk each used (peak while it wrote, and at the end). Rounds alternate
// no bound / bound; the median of the rounds' ratios is reported.
// Run: npm run build && node dist/bench/output-bound.js [--mib 1024] [--rounds 5]
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Supervisor } from "../lib/mod.ts";

const { values } = parseArgs({ args: process.argv.slice(2), options: { mib: { type: "string", default: "1024" }, rounds: { type: "string", default: "5" } } });
const MIB = Number(values.mib);
const ROUNDS = Number(values.rounds);
const TARGET = 0.8;
const BOUND = 32 * 1024 * 1024;

async function once(maxOutputBytes: number): Promise<{ seconds: number; peak: number; final: number }> {
  const storage = mkdtempSync(join(tmpdir(), "outlive-bench-bound-"));
  const sup = await Supervisor.open({ storage, maxOutputBytes, log: () => {} });
  try {
    const t0 = performance.now();
    const task = await sup.run({ argv: ["dd", "if=/dev/zero", "bs=64k", `count=${MIB * 16}`, "status=none"] });
    const file = sup.store.paths(task.id).stdout;
    let peak = 0;
    const sample = setInterval(() => (peak = Math.max(peak, statSync(file).blocks * 512)), 5);
    const done = await sup.wait(task.id);
    const seconds = (performance.now() - t0) / 1000;
    clearInterval(sample);
    if (done.exitCode !== 0 || done.outputBytes?.stdout !== MIB * 1024 * 1024) throw new Error(`task ended ${done.state} ${done.exitCode}, ${done.outputBytes?.stdout} bytes`);
    const final = statSync(file).blocks * 512;
    return { seconds, peak: Math.max(peak, final), final };
  } finally {
    await sup.close();
    rmSync(storage, { recursive: true, force: true });
  }
}

const runs: Record<"bounded" | "unbounded", Array<Awaited<ReturnType<typeof once>>>> = { bounded: [], unbounded: [] };
const ratios: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const u = await once(0);
  const b = await once(BOUND);
  runs.unbounded.push(u);
  runs.bounded.push(b);
  ratios.push(u.seconds / b.seconds);
}
const mid = <T>(xs: T[], key: (x: T) => number) => [...xs].sort((a, b) => key(a) - key(b))[Math.floor((xs.length - 1) / 2)];
const b = mid(runs.bounded, (r) => r.seconds);
const u = mid(runs.unbounded, (r) => r.seconds);
const ratio = mid(ratios, (r) => r);
const m = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const rate = (r: typeof b) => `${(MIB / r.seconds).toFixed(0)} MiB/s`;
console.log(`task writing ${MIB} MiB to stdout, median of ${ROUNDS} rounds (each round: no bound, then bound):`);
console.log(`  no bound        : ${rate(u)}, disk peak ${m(mid(runs.unbounded, (r) => r.peak).peak)}, at the end ${m(u.final)}`);
console.log(`  bound ${m(BOUND).padEnd(9)} : ${rate(b)}, disk peak ${m(mid(runs.bounded, (r) => r.peak).peak)} (largest ${m(Math.max(...runs.bounded.map((r) => r.peak)))}), at the end ${m(b.final)}`);
console.log(`  throughput ratio bound / no bound ${ratio.toFixed(2)}x (median of the rounds' ratios; target >= ${TARGET}x) ${ratio >= TARGET ? "ok" : "MISSED"}`);
