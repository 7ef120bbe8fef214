// `outlive serve` against the library in process, in the same run:
// (1) `run` of `true` through serve (this process a client on its stdio: the
//     request written, the record read back) vs `sup.run` in process, the
//     two interleaved; each task waited for (untimed) before the next run;
// (2) a task's exit → its `completion` notification at the client, beside
//     `sup.completions()` in process. The exit moment is the task's own:
//     its last act writes `date +%s%N` to a file, and the latency is the
//     moment the completion arrived minus that time.
// Both supervisors in standalone mode (process groups), each on a storage of its own.
// Run: npx tsc -p tsconfig.json && node dist/scripts/bundle-cli.js && node dist/bench/serve.js [--runs 60] [--completions 40]
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Supervisor } from "../lib/mod.ts";
import type { TaskRecord } from "../lib/store/record/record.ts";
import { median, quantile } from "./quantile.ts";
import { ServeClient } from "./serve-client.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { runs: { type: "string", default: "60" }, completions: { type: "string", default: "40" } },
});
const RUNS = Number(values.runs);
const COMPLETIONS = Number(values.completions);
const RUN_TARGET = 1.2;
const COMPLETION_TARGET_MS = 20;
const nowMs = () => performance.timeOrigin + performance.now();

/** Waits for each completion by task id, wherever it comes from, with the moment it arrived. */
class Arrivals {
  private readonly seen = new Map<string, number>();
  private readonly waiting = new Map<string, (atMs: number) => void>();
  arrived(id: string, atMs: number): void {
    const w = this.waiting.get(id);
    if (w) {
      this.waiting.delete(id);
      w(atMs);
    } else {
      this.seen.set(id, atMs);
    }
  }
  of(id: string): Promise<number> {
    const at = this.seen.get(id);
    if (at !== undefined) return Promise.resolve(at);
    return new Promise((resolve) => this.waiting.set(id, resolve));
  }
}

const dirs = [mkdtempSync(join(tmpdir(), "outlive-bench-serve-lib-")), mkdtempSync(join(tmpdir(), "outlive-bench-serve-rpc-"))];
const stamps = mkdtempSync(join(tmpdir(), "outlive-bench-serve-stamps-"));
const served = new Arrivals();
const client = new ServeClient(["--storage", dirs[1], "--mode", "standalone"], (method, params, atMs) => {
  if (method === "completion") served.arrived((params as TaskRecord).id, atMs);
});
const sup = await Supervisor.open({ storage: dirs[0], mode: "standalone", log: () => {} });
try {
  await client.call("initialize", { protocolVersion: "1", clientInfo: { name: "bench/serve" } });

  // (1) run
  const inProcess: number[] = [];
  const throughServe: number[] = [];
  for (let i = 0; i < RUNS + 5; i++) {
    let t0 = performance.now();
    const a = await sup.run({ argv: ["true"] });
    const lib = performance.now() - t0;
    t0 = performance.now();
    const b = await client.call<TaskRecord>("run", { argv: ["true"] });
    const rpc = performance.now() - t0;
    await Promise.all([sup.wait(a.id), client.call("wait", { id: b.id })]);
    if (i < 5) continue; // warm-up: both sides' JIT, the reserve pools
    inProcess.push(lib);
    throughServe.push(rpc);
  }
  const ratio = median(throughServe) / median(inProcess);
  console.log(
    `serve run: through serve median ${median(throughServe).toFixed(2)} ms (p90 ${quantile(throughServe, 0.9).toFixed(2)}), ` +
      `sup.run in process ${median(inProcess).toFixed(2)} ms (p90 ${quantile(inProcess, 0.9).toFixed(2)}) over ${RUNS} runs; ` +
      `ratio ${ratio.toFixed(2)}x (target <= ${RUN_TARGET}x) ${ratio <= RUN_TARGET ? "ok" : "MISSED"}`,
  );
  for (const r of await sup.list()) if (r.state === "exited") await sup.ack(r.id);
  for (const r of await client.call<TaskRecord[]>("list", { state: "finished" })) await client.call("ack", { id: r.id });

  // (2) exit → completion
  const local = new Arrivals();
  void (async () => {
    for await (const r of sup.completions()) local.arrived(r.id, nowMs());
  })();
  await client.call("completions/subscribe", {});
  const task = (stamp: string) => ({ shell: `sleep 0.05; date +%s%N > ${stamp}` });
  const exitedAt = (stamp: string) => Number(BigInt(readFileSync(stamp, "utf8").trim()) / 1000n) / 1000;
  const lat: Record<"lib" | "rpc", number[]> = { lib: [], rpc: [] };
  for (let i = 0; i < COMPLETIONS; i++) {
    const sa = join(stamps, `lib-${i}`);
    const sb = join(stamps, `rpc-${i}`);
    const a = await sup.run(task(sa));
    const b = await client.call<TaskRecord>("run", task(sb));
    const [atA, atB] = await Promise.all([local.of(a.id), served.of(b.id)]);
    lat.lib.push(atA - exitedAt(sa));
    lat.rpc.push(atB - exitedAt(sb));
    await Promise.all([sup.ack(a.id), client.call("ack", { id: b.id })]);
  }
  const m = median(lat.rpc);
  console.log(
    `serve completion: task's exit → completion notification at the client median ${m.toFixed(2)} ms (p90 ${quantile(lat.rpc, 0.9).toFixed(2)}); ` +
      `sup.completions() in process median ${median(lat.lib).toFixed(2)} ms (p90 ${quantile(lat.lib, 0.9).toFixed(2)}) over ${COMPLETIONS} tasks; ` +
      `ratio ${(m / median(lat.lib)).toFixed(2)}x (target median <= ${COMPLETION_TARGET_MS} ms) ${m <= COMPLETION_TARGET_MS ? "ok" : "MISSED"}`,
  );
} finally {
  await client.close();
  await sup.close();
  for (const d of [...dirs, stamps]) rmSync(d, { recursive: true, force: true });
}
