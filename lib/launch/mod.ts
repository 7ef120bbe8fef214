/**
 * Agent harnesses launched through outlive: run one as a task with its
 * launch record kept in the task's directory, and retire it when idle
 * (its whole unit or cgroup, escapees included).
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { Supervisor } from "../supervisor/supervisor.ts";
 * import { launchHarness, retireIdleHarness } from "./mod.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-launch-"));
 * const sup = await Supervisor.open({ storage, log: () => {} });
 * const { task } = await launchHarness(sup, { harness: "other", argv: ["sleep", "30"], servers: [] });
 * await new Promise((r) => setTimeout(r, 300));
 * console.log((await retireIdleHarness(sup, task.id)).killed?.record.state); // "killed": nothing ran under it
 * await sup.close();
 * rmSync(storage, { recursive: true });
 * ```
 *
 * @module
 */
export { launchHarness, type HarnessSpec, type LaunchedHarness } from "./launch-harness.ts";
export { mayRetireHarness, retireIdleHarness, type HarnessIdleDecision, type HarnessRetireOptions } from "./retire-harness.ts";
export { launchRecordPath, readLaunchRecordFile, writeLaunchRecordFile, type StoredLaunchRecord } from "./record-file.ts";
export { harnessLeader, type HarnessLeader } from "./harness-leader.ts";
