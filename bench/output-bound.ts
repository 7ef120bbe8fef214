// Throughput of a task writing 1 GiB to stdout with the output bound (the
// default 32 MiB) against the same task with no bound, in one run, and the
// disk each used (peak while it wrote, and at the end). Rounds alternate
// no bound / bound; the median of the rounds' ratios is reported. The bound is
// kept by outlive-shim (issue 33); the same pair under the shell wrapper's
// warden (shimPath: false) follows in each round (`--wrapper false` leaves it out).
// `--stress` runs `stress-ng --cpu $(nproc)` for the whole run (both cores busy, as on a loaded laptop or
// shared runner). Target (issue 33): >= 0.9x, quiet and under stress.
// Run: npm run build && node dist/bench/output-bound.js [--mib 1024] [--rounds 5] [--wrapper true|false] [--stress]
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Supervisor } from "../lib/mod.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    mib: { type: "string", default: "1024" },
    rounds: { type: "string", default: "5" },
    wrapper: { type: "string", default: "true" },
    stress: { type: "boolean", default: false },
  },
});
const MIB = Number(values.mib);
const ROUNDS = Number(values.rounds);
const TARGET = 0.9;
const BOUND = 32 * 1024 * 1024;

async function once(maxOutputBytes: number, wrapper = false): Promise<{ seconds: number; peak: number; final: number }> {
  const storage = mkdtempSync(join(tmpdir(), "outlive-bench-bound-"));
  const sup = await Supervisor.open({ storage, maxOutputBytes, log: () => {}, ...(wrapper ? { shimPath: false as const } : {}) });
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

const load = () => readFileSync("/proc/loadavg", "latin1").split(" ").slice(0, 3).join(" ");
const cores = availableParallelism();
// Its own process group, so the workers it forks end with it.
const stress = values.stress ? spawn("stress-ng", ["--cpu", String(cores), "--quiet"], { stdio: "ignore", detached: true }) : null;
if (stress) await new Promise((r) => setTimeout(r, 1000));
console.log(`load ${load()}${stress ? `, with stress-ng --cpu ${cores} running` : ""}`);
type Run = Awaited<ReturnType<typeof once>>;
const series = values.wrapper !== "false" ? (["shim", "wrapper"] as const) : (["shim"] as const);
const runs: Record<string, { bounded: Run[]; unbounded: Run[]; ratios: number[] }> = {};
for (const s of series) runs[s] = { bounded: [], unbounded: [], ratios: [] };
try {
  for (let i = 0; i < ROUNDS; i++) {
    for (const s of series) {
      const u = await once(0, s === "wrapper");
      const b = await once(BOUND, s === "wrapper");
      runs[s].unbounded.push(u);
      runs[s].bounded.push(b);
      runs[s].ratios.push(u.seconds / b.seconds);
    }
  }
} finally {
  if (stress) process.kill(-stress.pid!, "SIGTERM");
}
const mid = <T>(xs: T[], key: (x: T) => number) => [...xs].sort((a, b) => key(a) - key(b))[Math.floor((xs.length - 1) / 2)];
const m = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const rate = (r: Run) => `${(MIB / r.seconds).toFixed(0)} MiB/s`;
console.log(`task writing ${MIB} MiB to stdout, median of ${ROUNDS} rounds (each round: no bound, then bound${series.length > 1 ? ", under the shim then the shell wrapper" : ""}):`);
for (const s of series) {
  const r = runs[s];
  const b = mid(r.bounded, (x) => x.seconds);
  const u = mid(r.unbounded, (x) => x.seconds);
  const ratio = mid(r.ratios, (x) => x);
  const verdict = s === "shim" ? ` (target >= ${TARGET}x) ${ratio >= TARGET ? "ok" : "MISSED"}` : "";
  console.log(`  ${s}:`);
  console.log(`    no bound        : ${rate(u)}, disk peak ${m(mid(r.unbounded, (x) => x.peak).peak)}, at the end ${m(u.final)}`);
  console.log(`    bound ${m(BOUND).padEnd(9)} : ${rate(b)}, disk peak ${m(mid(r.bounded, (x) => x.peak).peak)} (largest ${m(Math.max(...r.bounded.map((x) => x.peak)))}), at the end ${m(b.final)}`);
  console.log(`    throughput ratio bound / no bound ${ratio.toFixed(2)}x (median of the rounds' ratios ${r.ratios.map((x) => x.toFixed(2)).join(", ")})${verdict}`);
}
console.log(`load at the end ${load()}`);
