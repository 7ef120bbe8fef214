// How close a restart policy's delays come to the backoff's (issue 34): a task that exits 1 at once, under
// `--restart on-failure` with a first delay and a cap, through the CLI (which returns at once: outlive-shim carries
// the policy out with no supervisor alive); each delay read from io/attempts (an attempt's end to the next one's
// start), as a ratio to the delay the backoff asked for.
// Target: every delay within 10% of the backoff's (never early).
// Run: npm run build && node dist/bench/restart-delays.js [--first 0.2] [--cap 3.2] [--max 8]
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { restartDelays } from "../lib/start/restart-policy.ts";

const { values } = parseArgs({ args: process.argv.slice(2), options: { first: { type: "string", default: "0.2" }, cap: { type: "string", default: "3.2" }, max: { type: "string", default: "8" } } });
const CLI = join(import.meta.dirname, "..", "scripts", "bin.js");
const storage = mkdtempSync(join(tmpdir(), "outlive-bench-restart-"));
const cli = (...args: string[]) => spawnSync(process.execPath, ["--", CLI, args[0], "--storage", storage, ...args.slice(1)], { encoding: "utf8" });

console.log(`bench/restart-delays: first ${values.first} s, cap ${values.cap} s, at most ${values.max} restarts; load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
try {
  const run = cli("run", "--restart", "on-failure", "--restart-max", values.max!, "--restart-delay", values.first!, "--restart-delay-max", values.cap!, "--shell", "exit 1");
  if (run.status !== 0) throw new Error(run.stderr);
  const id = run.stdout.trim();
  const waited = cli("wait", id, "--json");
  const end = JSON.parse(waited.stdout);
  const lines = readFileSync(join(storage, "tasks", id, "io", "attempts"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const got: number[] = [];
  for (let i = 1; i + 1 < lines.length; i += 2) got.push(lines[i + 1].at - lines[i].at);
  const want = restartDelays({ when: "on-failure", max: Number(values.max), delayMs: Math.round(Number(values.first) * 1000), delayMaxMs: Math.round(Number(values.cap) * 1000) });
  const ratios = got.map((ms, i) => ms / want[i]);
  console.log(`task ${id}: ${end.state}, exit ${end.exitCode}, ${end.restarts} restarts, ${lines.filter((l) => l.event === "start").length} attempts`);
  got.forEach((ms, i) => console.log(`  restart ${i + 1}: waited ${ms} ms for ${want[i]} ms: ${ratios[i].toFixed(3)}x`));
  const worst = Math.max(...ratios.map((r) => Math.abs(r - 1)));
  const early = ratios.some((r) => r < 0.999);
  console.log(`worst ${(worst * 100).toFixed(1)}% off the backoff's delay${early ? ", one early" : ", none early"}; target within 10%: ${worst <= 0.1 && !early ? "met" : "missed"}`);
} finally {
  cli("stop-all");
  rmSync(storage, { recursive: true, force: true });
}
