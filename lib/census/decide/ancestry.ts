import type { CensusProcess } from "../scan/process-list.ts";

/**
 * The leader's ancestors, their forks (a child with its parent's very argv:
 * not exec'd, so still the ancestor's own code, like a wrapper's warden
 * subshell) and everything below those forks. None of it was started by
 * the leader, so none of it is under the leader.
 *
 * @example
 * ```ts
 * import { ancestryOf } from "./ancestry.ts";
 * const p = (pid: number, ppid: number, argv: string[]) => ({ pid, ppid, pgid: 5, sid: 5, state: "S", startTime: "1", argv, name: "" });
 * const all = [p(5, 1, ["wrapper"]), p(6, 5, ["wrapper"]), p(7, 6, ["sleep"]), p(10, 5, ["claude"])];
 * const byPid = new Map(all.map((x) => [x.pid, x]));
 * const children = new Map([[5, [all[1], all[3]]], [6, [all[2]]]]);
 * console.log([...ancestryOf(all[3], byPid, children, (x) => x.pgid === 5)]); // [5, 6, 7]: the wrapper, its warden fork, its sleep
 * ```
 */
export function ancestryOf(
  head: CensusProcess,
  byPid: Map<number, CensusProcess>,
  children: Map<number, CensusProcess[]>,
  inScope: (p: CensusProcess) => boolean,
): Set<number> {
  // Only ancestors in the leader's group or cgroup: above them (a supervisor, init) nothing is taken anyway.
  const ancestors = new Set<number>();
  for (let p = byPid.get(head.ppid); p && inScope(p) && !ancestors.has(p.pid) && p.pid !== head.pid; p = byPid.get(p.ppid)) ancestors.add(p.pid);
  const ancestry = new Set(ancestors);
  for (const pid of ancestors) {
    const parent = byPid.get(pid)!;
    for (const child of children.get(pid) ?? []) {
      if (child.pid === head.pid || ancestors.has(child.pid) || !sameArgv(child.argv, parent.argv)) continue;
      const queue = [child];
      for (let i = 0; i < queue.length; i++) {
        if (queue[i].pid === head.pid || ancestry.has(queue[i].pid)) continue;
        ancestry.add(queue[i].pid);
        queue.push(...(children.get(queue[i].pid) ?? []));
      }
    }
  }
  return ancestry;
}

function sameArgv(a: readonly string[], b: readonly string[]): boolean {
  return a.length > 0 && a.length === b.length && a.every((x, i) => x === b[i]);
}
