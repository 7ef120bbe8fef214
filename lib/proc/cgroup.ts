import { readFileSync } from "node:fs";
import { isGone } from "./stat.ts";

/**
 * Picks the cgroup v2 path (the `0::` line) from the text of
 * `/proc/<pid>/cgroup`. Hybrid hosts list v1 hierarchies too; only the
 * unified one says where the process sits for `cgroup.kill`.
 *
 * @example
 * ```ts
 * import { parseCgroupFile } from "./cgroup.ts";
 * console.log(parseCgroupFile("4:memory:/x\n0::/a/b.scope\n")); // "/a/b.scope"
 * ```
 */
export function parseCgroupFile(text: string): string | null {
  for (const line of text.split("\n")) {
    if (line.startsWith("0::")) return line.slice(3);
  }
  return null;
}

/**
 * The cgroup v2 path of a process, or null when it is gone or has none.
 *
 * @example
 * ```ts
 * import { readCgroup } from "./cgroup.ts";
 * console.log(readCgroup("self")); // e.g. "/user.slice/user-1000.slice/session-2.scope"
 * console.log(readCgroup(4194305)); // null: no such process
 * ```
 */
export function readCgroup(pid: number | "self", procRoot = "/proc"): string | null {
  try {
    return parseCgroupFile(readFileSync(`${procRoot}/${pid}/cgroup`, "utf8"));
  } catch (error) {
    if (isGone(error)) return null;
    throw error;
  }
}
