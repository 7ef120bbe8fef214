// Spawn-to-exit of `true` through the supervisor vs a bare child_process.spawn,
// both measured in this run, per placement that works here.
// Run: npx tsc -p tsconfig.json && node dist/bench/spawn.js [--rounds N]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Supervisor } from "../lib/mod.ts";
import { workingPlacements } from "./placements.ts";
import { median } from "./quantile.ts";

const { values } = parseArgs({ args: process.argv.slice(2), options: { rounds: { type: "string", default: "60" } } });
const ROUNDS = Number(values.rounds);
const TARGET = 1.5;


async function bare(): Promise<number> {
  const t0 = performance.now();
  await new Promise((r) => spawn("true", { stdio: "ignore" }).once("exit", r));
  return performance.now() - t0;
}

async function through(sup: Supervisor): Promise<number> {
  const t0 = performance.now();
  const task = await sup.run({ argv: ["true"] });
  await sup.wait(task.id);
  return performance.now() - t0;
}

const prefix = `bench${process.pid}`;
console.log(`spawn-to-exit of \`true\`, median of ${ROUNDS} (interleaved with the baseline)`);
for (const name of await workingPlacements(prefix, "  ")) {
  const storage = mkdtempSync(join(tmpdir(), "outlive-bench-spawn-"));
  const sup = await Supervisor.open({ storage, placement: name, mode: "daemon", prefix, log: () => {} });
  const base: number[] = [];
  const ours: number[] = [];
  for (let i = 0; i < 5; i++) await through(sup); // warm-up
  for (let i = 0; i < ROUNDS; i++) {
    base.push(await bare());
    ours.push(await through(sup));
  }
  await sup.close();
  rmSync(storage, { recursive: true, force: true });
  const ratio = median(ours) / median(base);
  console.log(
    `  ${name.padEnd(14)} outlive ${median(ours).toFixed(2)} ms vs bare spawn ${median(base).toFixed(2)} ms: ` +
      `${ratio.toFixed(2)}x (target <= ${TARGET}x) ${ratio <= TARGET ? "ok" : "MISSED"}`,
  );
}
