import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { runSoak } from "../../harness/inside/soak/soak.ts";

// The short restart soak that CI runs on the host (the long one: node dist/harness/inside/soak/cli.js --restarts 500).
it("survives restarts at random moments with one true outcome per task and nothing left behind", async () => {
  const storage = mkdtempSync(join(tmpdir(), "outlive-soak-test-"));
  const seed = Number(process.env.OUTLIVE_SOAK_SEED ?? Date.now() % 100_000);
  const report = await runSoak({ storage, restarts: Number(process.env.OUTLIVE_SOAK_RESTARTS ?? 10), seed, inFlight: [10, 30] });
  console.log(
    `soak seed ${report.seed} (${report.placement}): ${report.restartsSurvived} restarts, ${report.tasksRun} tasks, ` +
      `outcomes ${JSON.stringify(report.outcomes)}, lost ${JSON.stringify(report.lost)}, faults ${JSON.stringify(report.faults)}, ${report.violations.length} violations`,
  );
  // A placement that survives a restart loses no task whose run had returned (process-group dies with the module's cgroup).
  if (report.placement !== "process-group") expect(report.lost.runReturned).toBe(0);
  expect(report.violations).toEqual([]);
  expect(report.leftovers).toEqual([]);
  expect(report.bystandersAlive).toBe(true);
  expect(report.restartsSurvived).toBeGreaterThanOrEqual(10);
  rmSync(storage, { recursive: true, force: true });
}, 300_000);
