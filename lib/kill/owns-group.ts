import type { Placement } from "../placement/placement.ts";
import { inspectPid } from "../proc/identity.ts";
import type { TaskRecord } from "../store/record/record.ts";

/**
 * Is a group whose leader is gone still this task's? Some member must be
 * in the task's cgroup or unit. A plain process group shares the
 * supervisor's cgroup and so proves little; cgroup placements prove it.
 */
export function ownsGroup(record: TaskRecord, placement: Placement, members: readonly number[]): boolean {
  return members.some((pid) => {
    const live = inspectPid(pid);
    return live !== null && placement.identify(record, live);
  });
}
