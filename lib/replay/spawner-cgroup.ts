import { existsSync } from "node:fs";
import { join } from "node:path";
import { cgroupProcs, findCgroup2Mount } from "../placement/cgroup-fs.ts";
import { inspectPid, type ProcessIdentity } from "../proc/identity.ts";
import type { SpawnerCgroupEvidence } from "./decide.ts";

/**
 * What the cgroup a task shared with its dead supervisor shows now. Only a
 * cgroup that was killed or removed explains a task's end: a kill of a
 * cgroup ends every process in it at once, so a process there that is older
 * than the task, or one of the dead supervisor's other tasks still alive,
 * proves nothing killed that cgroup since the task started. Processes
 * younger than the task are not counted: the next supervisor (and whatever
 * launched it) lives in the same cgroup after a restart.
 *
 * @example
 * ```ts
 * import { spawnerCgroupEvidence } from "./spawner-cgroup.ts";
 * console.log(spawnerCgroupEvidence("/", { pid: 1, startTime: "1" }, [])); // { kind: "root" }
 * ```
 */
export function spawnerCgroupEvidence(
  cgroup: string,
  task: ProcessIdentity | null,
  otherTasks: readonly ProcessIdentity[],
  mount: string | null = findCgroup2Mount(),
): SpawnerCgroupEvidence {
  if (cgroup === "/") return { kind: "root" };
  if (mount === null) return { kind: "unknown", why: "no cgroup v2 mount to look in" };
  const dir = join(mount, cgroup);
  if (!existsSync(dir)) return { kind: "removed" };
  const survivor = otherTasks.find((t) => inspectPid(t.pid)?.startTime === t.startTime);
  if (survivor) return { kind: "survivors", detail: `another task of that supervisor (pid ${survivor.pid}) still runs there` };
  if (task === null) return { kind: "unknown", why: "the task's start time was never recorded" };
  const taskStart = BigInt(task.startTime);
  for (const pid of cgroupProcs(dir)) {
    const live = inspectPid(pid);
    if (live && BigInt(live.startTime) < taskStart) {
      return { kind: "survivors", detail: `pid ${pid}, older than the task, still runs there` };
    }
  }
  return { kind: "emptied" };
}
