#!/usr/bin/env node
/**
 * The restart soak on this machine: `node dist/harness/inside/soak/cli.js
 * [--restarts 20] [--seed N] [--placement auto] [--json]`. Exit 0 when no
 * invariant was violated and nothing was left behind, 1 otherwise.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { runSoak } from "./soak.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    restarts: { type: "string", default: "20" },
    seed: { type: "string" },
    placement: { type: "string", default: "auto" },
    runtime: { type: "string", default: "node" },
    json: { type: "boolean" },
    keep: { type: "boolean" },
  },
});

const storage = mkdtempSync(join(tmpdir(), "outlive-soak-"));
const report = await runSoak({
  storage,
  placement: values.placement,
  restarts: Number(values.restarts),
  seed: values.seed === undefined ? undefined : Number(values.seed),
  runtime: values.runtime as "node" | "deno",
  log: (line) => console.error(line),
});
const ok = report.violations.length === 0 && report.leftovers.length === 0;
if (values.json) console.log(JSON.stringify(report, null, 2));
else {
  console.log(`soak (seed ${report.seed}, placement ${report.placement}): ${report.restartsSurvived} restarts survived ` +
    `(${Object.entries(report.faults).map(([k, v]) => `${k} ${v}`).join(", ")}), ${report.tasksRun} tasks run in ${(report.ms / 1000).toFixed(0)} s`);
  console.log(`outcomes: ${Object.entries(report.outcomes).map(([k, v]) => `${k} ${v}`).join(", ")}`);
  for (const [kind, o] of Object.entries(report.outcomesByKind)) console.log(`  ${kind.padEnd(14)} ${Object.entries(o).map(([k, v]) => `${k} ${v}`).join(", ")}`);
  console.log(`completions delivered: ${report.completionsDelivered}; bystanders untouched: ${report.bystandersAlive}`);
  console.log(`violations: ${report.violations.length}`);
  for (const v of report.violations.slice(0, 20)) console.log(`  ${v.id}: ${v.rule}: ${v.detail}`);
  console.log(`left behind: ${report.leftovers.length ? report.leftovers.join(", ") : "nothing"}`);
}
if (ok && !values.keep) rmSync(storage, { recursive: true, force: true });
else console.log(`storage: ${storage}`);
// Requests still pending on modules that were killed keep timers alive; the verdict is in.
process.exit(ok ? 0 : 1);
