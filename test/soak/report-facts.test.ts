import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { runSoak } from "../../harness/inside/soak/soak.ts";
import { collectTaskFacts, deliveryCounts } from "../../harness/inside/task-facts.ts";
import { renderTimeline } from "../../harness/host/timeline/timeline-svg.ts";
import type { ScenarioReport } from "../../harness/shared/report.ts";

// The soak's report told every task "completionsDelivered: 0" and every lane of its timeline
// "delivered 0×" while facts.soak counted 173 deliveries: its simulator is no ctx.daemon(), so
// the per-task counts never saw its deliveries. Here a short real soak on the host (process
// groups) feeds the report builder what the scenario hands it, and the counts are the deliveries.
it("per-task completionsDelivered and the timeline's lanes come from what the soak delivered", async () => {
  const storage = mkdtempSync(join(tmpdir(), "outlive-soak-facts-"));
  try {
    const report = await runSoak({ storage, restarts: 3, seed: 4242, inFlight: [5, 10] });
    expect(report.deliveredIds).toHaveLength(report.completionsDelivered);
    expect(report.completionsDelivered).toBeGreaterThan(0);
    // What harness/cases/soak.ts hands the context, and the driver passes on for this storage.
    const facts = await collectTaskFacts([storage], () => report.deliveredIds.map((id) => ({ id })));
    const counts = deliveryCounts(report.deliveredIds.map((id) => ({ id })));
    for (const f of facts) expect(f.completionsDelivered, f.id).toBe(counts.get(f.id) ?? 0);
    const finished = facts.filter((f) => !["running", "starting", "killing"].includes(f.fate));
    expect(finished.length).toBeGreaterThan(0);
    // Every finished task's completion reached the soak's daemon at least once.
    for (const f of finished) expect(f.completionsDelivered, f.id).toBeGreaterThanOrEqual(1);
    const kept = facts.reduce((n, f) => n + f.completionsDelivered, 0);
    const removed = report.deliveredIds.filter((id) => !facts.some((f) => f.id === id)).length;
    expect(kept + removed).toBe(report.completionsDelivered);
    // The timeline's lanes say the same.
    const fixture = JSON.parse(readFileSync(join(import.meta.dirname, "..", "scenario", "fixtures", "soak-report.json"), "utf8")) as ScenarioReport;
    const svg = renderTimeline({ ...fixture, tasks: facts, storages: [storage] });
    const lanes = [...svg.matchAll(/delivered (\d+)×/g)].map((m) => Number(m[1]));
    expect(lanes.length).toBe(facts.length);
    expect(lanes.filter((n) => n > 0).length).toBe(facts.filter((f) => f.completionsDelivered > 0).length);
  } finally {
    rmSync(storage, { recursive: true, force: true });
  }
}, 300_000);
