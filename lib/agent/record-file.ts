import { readFile } from "node:fs/promises";
import { censusError, describeThrown, errnoCode, type CensusError } from "../census/census-error.ts";
import type { LaunchRecord } from "../census/agent-config/launch-record.ts";
import { writeFileAtomic } from "../store/write/atomic-write.ts";
import { taskLaunchRecordPath, taskPaths } from "../store/layout.ts";
import { checkTaskId } from "../store/record/task-id.ts";

/**
 * Where a launched harness's launch record lives: in its task's directory,
 * beside `record.json`, so it is the task's as long as the task is kept.
 *
 * @example
 * ```ts
 * import { launchRecordPath } from "./record-file.ts";
 * console.log(launchRecordPath("/srv/outlive", "t-1")); // "/srv/outlive/tasks/t-1/launch-record.json"
 * ```
 */
export function launchRecordPath(storage: string, id: string): string {
  return taskLaunchRecordPath(taskPaths(storage, checkTaskId(id)).dir);
}

/**
 * Writes the record atomically (temp file + rename + fsync): a reader sees all of it or none.
 *
 * @example
 * ```ts
 * import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
 * import { join } from "node:path";
 * import { tmpdir } from "node:os";
 * import { readLaunchRecordFile, writeLaunchRecordFile } from "./record-file.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-record-"));
 * mkdirSync(join(storage, "tasks", "t-1"), { recursive: true });
 * await writeLaunchRecordFile(storage, "t-1", { known: true, servers: [], notes: [], readAt: new Date().toISOString() });
 * console.log((await readLaunchRecordFile(storage, "t-1")).ok); // true
 * rmSync(storage, { recursive: true });
 * ```
 */
export async function writeLaunchRecordFile(storage: string, id: string, record: LaunchRecord): Promise<void> {
  await writeFileAtomic(launchRecordPath(storage, id), JSON.stringify(record, null, 2) + "\n");
}

export type StoredLaunchRecord =
  /** The record read back. */
  | { ok: true; record: LaunchRecord }
  /** None stored (a task not launched as a harness, or its supervisor died before writing it), or it cannot be used. */
  | { ok: false; problem: CensusError };

/**
 * Reads a task's launch record back, after any number of restarts. A
 * missing or damaged one is a problem, never a guess: the caller then
 * decides as for a harness with no launch record (kept by any process).
 *
 * @example
 * ```ts
 * import { readLaunchRecordFile } from "./record-file.ts";
 * const r = await readLaunchRecordFile("/nonexistent", "t-1");
 * console.log(r.ok || r.problem.code); // "config-missing"
 * ```
 */
export async function readLaunchRecordFile(storage: string, id: string): Promise<StoredLaunchRecord> {
  const path = launchRecordPath(storage, id);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = errnoCode(error) === "ENOENT" ? "config-missing" : "config-unreadable";
    return { ok: false, problem: censusError(code, `task ${id} has no readable launch record at ${path}: ${describeThrown(error)}`) };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: censusError("config-unparsable", `${path} is not JSON (${describeThrown(error)})`) };
  }
  if (!isLaunchRecord(value)) return { ok: false, problem: censusError("config-wrong-type", `${path} is not a launch record`) };
  return { ok: true, record: value };
}

function isLaunchRecord(v: unknown): v is LaunchRecord {
  const r = v as LaunchRecord;
  const strings = (a: unknown) => Array.isArray(a) && a.every((x) => typeof x === "string");
  return (
    typeof r === "object" && r !== null && typeof r.known === "boolean" && typeof r.readAt === "string" && Array.isArray(r.notes) &&
    Array.isArray(r.servers) &&
    r.servers.every((s) => typeof s?.name === "string" && typeof s.source === "string" && typeof s.command === "string" && strings(s.args) && strings(s.programs))
  );
}
