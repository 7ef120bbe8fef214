import { existsSync, readdirSync, readFileSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { waitUntil } from "../../lib/kill/process-group.ts";
import { killCgroup, removeCgroup } from "../../lib/placement/cgroup-fs.ts";

/**
 * How long a test file's cgroup-v2 base is waited for at its end. The
 * placement removes a task's cgroup in the background once the task's last
 * process has gone (retrying for up to 10 s while it is busy), so on a busy
 * machine the last test's cgroup may still be going when the file ends.
 */
export const BASE_REMOVAL_MS = 30_000;

/** Every cgroup below `dir`, deepest first. */
function cgroupsBelow(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
  } catch {
    return [];
  }
  return names.flatMap((n) => [...cgroupsBelow(join(dir, n)), join(dir, n)]);
}

/** True once `dir` is gone; an EBUSY (a process or a cgroup still in it) is false. */
function rmdirIfEmpty(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ENOENT") return true;
    if (code === "EBUSY") return false;
    throw error;
  }
}

/** The processes in `dir`, each as `pid (command line)`. */
function processesIn(dir: string): string[] {
  let pids: string[];
  try {
    pids = readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
  return pids.map((pid) => {
    try {
      return `${pid} (${readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim()})`;
    } catch {
      return pid;
    }
  });
}

/**
 * Removes a test file's cgroup-v2 placement base at its end, waiting on the
 * evidence (the base gone) rather than asking it of the moment the last test
 * returns. Cgroups left empty in it (a supervisor killed before its removal
 * ran) are removed on the way. A process still in it after `boundMs` is a
 * finding, not a slow machine: it is killed, its cgroups removed, and this
 * throws naming each.
 */
export async function removePlacementBase(base: string | null | undefined, boundMs = BASE_REMOVAL_MS): Promise<void> {
  if (!base || !existsSync(base)) return;
  const gone = await waitUntil(() => {
    for (const dir of cgroupsBelow(base)) rmdirIfEmpty(dir);
    return rmdirIfEmpty(base);
  }, boundMs, 50);
  if (gone) return;
  const left = [...cgroupsBelow(base), base].map((dir) => ({ dir, processes: processesIn(dir) }));
  for (const { dir } of left) {
    await killCgroup(dir);
    await removeCgroup(dir, 5000);
  }
  const what = left.map(({ dir, processes }) => `${dir}: ${processes.join(", ") || "no process"}`).join("; ");
  throw new Error(`cgroup base ${base} was still held ${boundMs} ms after the file's last test (killed and removed now): ${what}`);
}
