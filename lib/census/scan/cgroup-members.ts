import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describeThrown, errnoCode } from "../census-error.ts";
import { censusError, type CensusError } from "../census-error.ts";

export type CgroupMembers = { ok: true; pids: number[] } | { ok: false; error: CensusError };

const gone = (error: unknown) => {
  const code = errnoCode(error);
  return code === "ENOENT" || code === "ENODEV";
};

/**
 * Every pid in the cgroup directory `dir` and in all cgroups below it.
 * A child cgroup removed during the walk holds nothing; anything else that
 * cannot be read (the cgroup itself gone, no permission) is an error, since
 * a missed pid might be the very process that keeps a harness up.
 *
 * @example
 * ```ts
 * import { readCgroupMembers } from "./cgroup-members.ts";
 * console.log(readCgroupMembers("/nonexistent/cgroup").ok); // false
 * ```
 */
export function readCgroupMembers(dir: string): CgroupMembers {
  const pids: number[] = [];
  try {
    collect(dir, pids, true);
  } catch (error) {
    return { ok: false, error: censusError("cgroup-unreadable", `cannot read the members of cgroup ${dir}: ${errnoCode(error)} ${describeThrown(error)}`) };
  }
  return { ok: true, pids };
}

function collect(dir: string, pids: number[], top: boolean): void {
  let procs: string;
  let entries: import("node:fs").Dirent[];
  try {
    procs = readFileSync(join(dir, "cgroup.procs"), "latin1");
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    if (!top && gone(error)) return;
    throw error;
  }
  for (const line of procs.split("\n")) if (line !== "") pids.push(Number(line));
  for (const entry of entries) if (entry.isDirectory()) collect(join(dir, entry.name), pids, false);
}
