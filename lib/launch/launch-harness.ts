import { readLaunchRecord, type LaunchInputs, type LaunchRecord, type LaunchRecordOptions } from "../census/launch-record.ts";
import { describeValue, OutliveError } from "../errors.ts";
import type { RunSpec } from "../supervisor/options.ts";
import type { Supervisor } from "../supervisor/supervisor.ts";
import type { TaskRecord } from "../store/record.ts";
import { writeLaunchRecordFile } from "./record-file.ts";

/** An agent harness to run as an outlive task. */
export interface HarnessSpec extends Omit<RunSpec, "shell" | "argv"> {
  /** Whose configs name its MCP servers: Claude Code's, Codex's, or none (`other`, e.g. an ACP agent). */
  harness: LaunchInputs["harness"];
  /** The harness's argv (Claude Code's `--mcp-config` is read from it). */
  argv: string[];
  /** Servers handed to it at session start (ACP `session/new` `mcpServers`). */
  servers?: readonly unknown[];
}

export interface LaunchedHarness {
  task: TaskRecord;
  launchRecord: LaunchRecord;
}

const HARNESSES = ["claude-code", "codex", "other"];

/**
 * Runs an agent harness as an outlive task and keeps, in the task's
 * directory, its launch record: the MCP servers its configs named just
 * before the spawn. A supervisor adopting the task after a restart reads
 * the same record back, so the harness is judged by the servers it started
 * with, not by whatever the configs say later (nor kept up by any server).
 * The record is written once the task runs; if this process dies in that
 * moment the task has none and is judged as adopted without one (kept by
 * anything that runs under it).
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { Supervisor } from "../supervisor/supervisor.ts";
 * import { launchHarness } from "./launch-harness.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-launch-"));
 * const sup = await Supervisor.open({ storage, log: () => {} });
 * const { task, launchRecord } = await launchHarness(sup, { harness: "other", argv: ["sleep", "30"], servers: [] });
 * console.log(task.state, launchRecord.known); // "running" true
 * await sup.kill(task.id);
 * await sup.close();
 * rmSync(storage, { recursive: true });
 * ```
 */
export async function launchHarness(sup: Supervisor, spec: HarnessSpec, options: LaunchRecordOptions = {}): Promise<LaunchedHarness> {
  if (typeof spec !== "object" || spec === null) throw new OutliveError("E_BAD_OPTION", `Expected the harness spec to be an object, got ${describeValue(spec)}`);
  if (!HARNESSES.includes(spec.harness)) {
    throw new OutliveError("E_BAD_OPTION", `Expected the \`harness\` option to be one of ${HARNESSES.join(", ")}, got ${describeValue(spec.harness)}`);
  }
  const { harness, servers, ...run } = spec;
  const cwd = run.cwd ?? process.cwd();
  // The task's environment is this process's with the spec's on top; the configs are looked up in that one.
  const env = { ...process.env, ...(run.env ?? {}) };
  const launchRecord = await readLaunchRecord({ harness, argv: run.argv, cwd, env, servers }, options);
  const task = await sup.run(run);
  await writeLaunchRecordFile(sup.store.root, task.id, launchRecord);
  return { task, launchRecord };
}
