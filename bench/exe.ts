// The single executable (dist/exe/outlive, `npm run build:exe`): its `--help` cold (a new process each time) vs
// the installed CLI's, `node dist/scripts/bin.js --help`, in the same interleaved rounds; and its size, raw and
// gzipped (gzip's default level, as a release's .tar.gz holds it), and the release archive's.
// Targets (issue 35): --help <= 1.2x; at most 110 MiB raw, 42 MiB gzipped.
// `--also EXE` times another build in the same rounds (e.g. one made with `build-exe.js --no-code-cache --out DIR`).
// Run: npm run build && npm run build:exe && node dist/bench/exe.js [--rounds 21] [--also EXE]
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { median } from "./quantile.ts";

const { values } = parseArgs({ args: process.argv.slice(2), options: { rounds: { type: "string", default: "21" }, also: { type: "string" } } });
const ROUNDS = Number(values.rounds);
const DIST = join(import.meta.dirname, "..");
const EXE = join(DIST, "exe", "outlive");
const ARCHIVE = join(DIST, "exe", "outlive-linux-x64.tar.gz");
const BIN = join(DIST, "scripts", "bin.js");
for (const [file, how] of [[EXE, "npm run build:exe"], [BIN, "npm run build"]]) {
  if (!existsSync(file)) {
    console.error(`bench/exe: no ${file}; run ${how} first`);
    process.exit(2);
  }
}

function timed(argv: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(argv[0], argv.slice(1), { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${argv.join(" ")} exited ${r.status}: ${r.stderr}`);
  return ms;
}

const MiB = 2 ** 20;
const raw = statSync(EXE).size;
const gzipped = gzipSync(readFileSync(EXE)).length;
const load = loadavg()[0].toFixed(2);

const exe = [EXE, "--help"];
const npm = [process.execPath, BIN, "--help"];
// One unmeasured round warms the page cache, as a user's second command finds it.
const also = values.also ? [values.also, "--help"] : null;
timed(exe), timed(npm), also && timed(also);
const series = { exe: [] as number[], npm: [] as number[], also: [] as number[] };
for (let i = 0; i < ROUNDS; i++) {
  series.exe.push(timed(exe));
  series.npm.push(timed(npm));
  if (also) series.also.push(timed(also));
}
const ratio = median(series.exe) / median(series.npm);
const verdict = (ok: boolean) => (ok ? "OK" : "OVER TARGET");
console.log(`the single executable (${EXE}), load average ${load} at the start:`);
console.log(`  --help, median of ${ROUNDS} interleaved rounds: exe ${median(series.exe).toFixed(1)} ms, node ${process.version} dist/scripts/bin.js ${median(series.npm).toFixed(1)} ms: ${ratio.toFixed(2)}x (target <= 1.2x)  ${verdict(ratio <= 1.2)}`);
if (also) console.log(`  --help of ${values.also}: ${median(series.also).toFixed(1)} ms: ${(median(series.also) / median(series.npm)).toFixed(2)}x`);
console.log(`  size: ${(raw / MiB).toFixed(1)} MiB raw (target <= 110)  ${verdict(raw <= 110 * MiB)}; ${(gzipped / MiB).toFixed(1)} MiB gzipped (target <= 42)  ${verdict(gzipped <= 42 * MiB)}`);
if (existsSync(ARCHIVE)) console.log(`  release archive (outlive + outlive-shim): ${(statSync(ARCHIVE).size / MiB).toFixed(1)} MiB`);
