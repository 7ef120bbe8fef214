import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { TaskPaths } from "../store/layout.ts";
import type { TaskRecord } from "../store/record/record.ts";
import { type LimitEvents, limitEventsOf } from "./limits.ts";

/**
 * What a task's CPU and pids limits did, at its end: from the counters
 * outlive-shim copied into `io/` as it ended, else (the shell wrapper, or a
 * shim killed before it could) from its cgroup while that still exists.
 * Null for a task without such limits.
 */
export function readLimitEvents(record: TaskRecord, paths: TaskPaths): LimitEvents | null {
  const limits = { cpuCores: record.cpuCores ?? null, pidsMax: record.pidsMax ?? null };
  if (limits.cpuCores === null && limits.pidsMax === null) return null;
  const dir = record.location.cgroupDir;
  const read = (copied: string, name: string) => text(copied) ?? (dir ? text(join(dir, name)) : null) ?? "";
  return limitEventsOf(limits, read(paths.pidsEvents, "pids.events"), read(paths.cpuStat, "cpu.stat"));
}

function text(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}
