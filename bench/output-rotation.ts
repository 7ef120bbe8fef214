// The two ways to bound a file the task itself holds open with O_APPEND,
// measured on the same writer (`seq 1 N`, ~170 MB of numbered lines, written
// as fast as it can): outlive's trimmer (punch the head, offsets stay) and
// copy-then-truncate rotation (cp FILE FILE.1; truncate FILE; checked as
// often). Reported per way: throughput vs no bound in the same run, disk at
// the end, and lines lost that the bound did not mean to drop (a gap
// inside what was kept). Baseline: the same writer with no bound.
// Run: npm run build && node dist/bench/output-rotation.js [--lines N] [--rounds 3]
import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { readDropped } from "../lib/output/dropped.ts";
import { TRIM_SCRIPT } from "../lib/output/trim-loop.ts";
import { wrapperArgv } from "../lib/spawn/wrapper.ts";

const { values } = parseArgs({ args: process.argv.slice(2), options: { lines: { type: "string", default: "20000000" }, rounds: { type: "string", default: "3" } } });
const N = Number(values.lines);
const ROUNDS = Number(values.rounds);
const MAX = 32 * 1024 * 1024;
const ROTATE = `max=$1 f=$2
trap 'exit 0' TERM
while :; do
  size=$(stat -c %s "$f")
  if [ "$size" -gt "$max" ]; then cp "$f" "$f.1" && truncate -s 0 "$f"; fi
  sleep 0.1 & wait $!
done`;

const run = (argv: string[], out?: number) =>
  spawn(argv[0], argv.slice(1), { stdio: ["ignore", out ?? "ignore", "ignore"] });
const exit = (c: ReturnType<typeof run>) => new Promise<void>((r) => c.on("exit", () => r()));

/** How many line numbers are missing or repeated in `text` (a gap or a step back inside what was kept). */
function gaps(text: string): number {
  const nums = text.split("\n").filter((l) => /^\d+$/.test(l)).map(Number);
  let lost = 0;
  for (let i = 1; i < nums.length; i++) if (nums[i] !== nums[i - 1] + 1) lost += Math.abs(nums[i] - nums[i - 1] - 1);
  return lost;
}

async function once(way: "none" | "punch" | "copytruncate") {
  const dir = mkdtempSync(join(tmpdir(), "outlive-bench-rotate-"));
  try {
    const file = join(dir, "stdout");
    const fd = openSync(file, "a");
    const t0 = performance.now();
    // Punching runs as in a task: the writer under the wrapper, whose warden trims beside it.
    const seq = ["seq", "1", String(N)];
    const writer = run(way === "punch" ? wrapperArgv({ command: { argv: seq }, enterCgroupProcs: null, deadlineSeconds: 0, graceMs: 100,
      timedOutFile: join(dir, "timed-out"), trim: { script: TRIM_SCRIPT, maxBytes: MAX } }) : seq, fd);
    closeSync(fd);
    const side = way === "copytruncate" ? run(["/bin/sh", "-c", ROTATE, "rotate", String(MAX), file]) : null;
    await exit(writer);
    const seconds = (performance.now() - t0) / 1000;
    side?.kill("SIGTERM");
    if (side) await exit(side);
    const disk = statSync(file).blocks * 512 + (existsSync(`${file}.1`) ? statSync(`${file}.1`).blocks * 512 : 0);
    let kept: string;
    if (way === "copytruncate") {
      kept = (existsSync(`${file}.1`) ? readFileSync(`${file}.1`, "latin1") : "") + readFileSync(file, "latin1");
    } else {
      const from = readDropped(`${file}.dropped`);
      const buf = readFileSync(file);
      kept = buf.subarray(buf.indexOf(0x0a, Math.max(0, from - 1)) + 1).toString("latin1");
    }
    return { seconds, disk, lost: gaps(kept) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const mid = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor((xs.length - 1) / 2)];
const m = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MiB`;
const results = { punch: [] as Array<{ ratio: number; disk: number; lost: number }>, copytruncate: [] as Array<{ ratio: number; disk: number; lost: number }> };
const bases: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  for (const way of ["punch", "copytruncate"] as const) {
    const base = await once("none");
    const r = await once(way);
    bases.push(base.seconds);
    results[way].push({ ratio: base.seconds / r.seconds, disk: r.disk, lost: r.lost });
  }
}
console.log(`seq 1 ${N} into an O_APPEND file, bound ${m(MAX)}, ${ROUNDS} rounds (each: no bound, then the way); no bound median ${mid(bases).toFixed(2)} s`);
for (const way of ["punch", "copytruncate"] as const) {
  const rs = results[way];
  console.log(`  ${way.padEnd(12)}: median ${mid(rs.map((r) => r.ratio)).toFixed(2)}x the throughput of no bound (rounds ${rs.map((r) => r.ratio.toFixed(2)).join(", ")}), ` +
    `disk at the end ${m(mid(rs.map((r) => r.disk)))}, lines lost or repeated inside what was kept: ${rs.map((r) => r.lost).join(", ")}`);
}
