// The alternatives for a durable record write, measured on this machine's disk in one run, interleaved,
// as µs per record and as ratios against today's write (lib/store/write/atomic-write.ts).
// Run: npm run build && node dist/bench/durable-write.js [--dir D] [--rounds N] [--per-round K]
// `--dir` must be on the file system the storage lives on (default: the OS temp dir); a tmpfs measures nothing.
import { mkdtempSync, rmSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { median, quantile } from "./quantile.ts";
import { RECORD, writeVariants } from "./write-variants.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    dir: { type: "string", default: tmpdir() },
    rounds: { type: "string", default: "30" },
    "per-round": { type: "string", default: "24" },
  },
});
const ROUNDS = Number(values.rounds);
const PER_ROUND = Number(values["per-round"]);
const root = mkdtempSync(join(values.dir, "outlive-bench-durable-"));

const variants = writeVariants(root, PER_ROUND);
const fsType = statfsSync(root).type;
console.log(`durable record write (${Buffer.byteLength(RECORD)} bytes), ${ROUNDS} rounds of ${PER_ROUND} records, order rotated each round`);
console.log(`in ${root} (file system type 0x${fsType.toString(16)}${fsType === 0xef53 ? ", ext4" : fsType === 0x01021994 ? ", tmpfs: fsync is free here, the figures mean little" : ""})`);
const perRecord = new Map<string, number[]>(variants.map((v) => [v.name, []]));
try {
  for (const v of variants) {
    await v.setUp?.();
    await v.write(PER_ROUND * 2); // warm-up
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < variants.length; k++) {
      const v = variants[(round + k) % variants.length];
      // Group commit is measured over batches as big as its group, at least one round's worth.
      const n = Math.max(PER_ROUND, v.name.includes("per 64") ? 64 : 0);
      const t0 = performance.now();
      await v.write(n);
      perRecord.get(v.name)!.push(((performance.now() - t0) * 1000) / n);
    }
  }
} finally {
  for (const v of variants) await v.tearDown?.().catch(() => {});
  rmSync(root, { recursive: true, force: true });
}
const today = median(perRecord.get(variants[0].name)!);
for (const v of variants) {
  const xs = perRecord.get(v.name)!;
  const m = median(xs);
  console.log(
    `  ${v.name.padEnd(50)} ${m.toFixed(0).padStart(6)} µs/record (rounds p10–p90 ${quantile(xs, 0.1).toFixed(0)}–${quantile(xs, 0.9).toFixed(0)})  ${(m / today).toFixed(3)}x today`,
  );
}
