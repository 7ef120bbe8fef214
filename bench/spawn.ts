// Spawn-to-exit of `true` through the supervisor vs a bare child_process.spawn,
// both measured in this run, per placement that works here. A third series, interleaved, keeps the storage
// on tmpfs (/dev/shm), where fsync and file creation cost next to nothing: what no change to the record
// write path can beat, so the part of the overhead the writes are.
// Run: npx tsc -p tsconfig.json && node dist/bench/spawn.js [--rounds N]
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statfsSync } from "node:fs";
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
const TMPFS_MAGIC = 0x01021994;
const tmpfsDir = existsSync("/dev/shm") && statfsSync("/dev/shm").type === TMPFS_MAGIC ? "/dev/shm" : null;

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
if (!tmpfsDir) console.log("  the tmpfs series is skipped: /dev/shm is not a tmpfs here");
for (const name of await workingPlacements(prefix, "  ")) {
  const storages: string[] = [];
  const open = (dir: string) => {
    storages.push(mkdtempSync(join(dir, "outlive-bench-spawn-")));
    return Supervisor.open({ storage: storages.at(-1)!, placement: name, mode: "daemon", prefix, log: () => {} });
  };
  const sup = await open(tmpdir());
  const onTmpfs = tmpfsDir ? await open(tmpfsDir) : null;
  const base: number[] = [];
  const ours: number[] = [];
  const bound: number[] = [];
  for (let i = 0; i < 5; i++) {
    await through(sup); // warm-up
    if (onTmpfs) await through(onTmpfs);
  }
  for (let i = 0; i < ROUNDS; i++) {
    base.push(await bare());
    ours.push(await through(sup));
    if (onTmpfs) bound.push(await through(onTmpfs));
  }
  await sup.close();
  await onTmpfs?.close();
  for (const dir of storages) rmSync(dir, { recursive: true, force: true });
  const ratio = median(ours) / median(base);
  console.log(
    `  ${name.padEnd(14)} outlive ${median(ours).toFixed(2)} ms vs bare spawn ${median(base).toFixed(2)} ms: ` +
      `${ratio.toFixed(2)}x (target <= ${TARGET}x) ${ratio <= TARGET ? "ok" : "MISSED"}` +
      (onTmpfs ? `; storage on tmpfs ${median(bound).toFixed(2)} ms: ${(median(bound) / median(base)).toFixed(2)}x` : ""),
  );
}
