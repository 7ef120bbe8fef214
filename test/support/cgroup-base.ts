import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { waitUntil } from "../../lib/kill/process-group.ts";
import { cgroupProcs, killCgroup, removeCgroup } from "../../lib/placement/cgroup-fs.ts";
import { argvOf } from "./storage-processes.ts";

/**
 * How long a test file's cgroup-v2 base is waited for at its end. The
 * placement removes a task's cgroup in the background once the task's last
 * process has gone, so on a busy machine the last test's cgroup may still be
 * going when the file ends.
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

/** The processes in `dir`, each as `pid (command line)`. */
function processesIn(dir: string): string[] {
  return cgroupProcs(dir).map((pid) => `${pid} (${argvOf(pid).join(" ") || "gone"})`);
}

/**
 * Removes a test file's cgroup-v2 placement base at its end, waiting on the
 * evidence rather than asking it of the moment the last test returns: the
 * placement removes each task's cgroup itself once its last process has
 * gone, in the background. So this waits for every cgroup in the base to go,
 * then removes the base if the placement has not. A cgroup still there after `boundMs` is a
 * finding, not a slow machine (a process the file left running, or a
 * placement that left a cgroup behind): it is killed and removed, and this
 * throws naming each with its processes.
 */
export async function removePlacementBase(base: string | null | undefined, boundMs = BASE_REMOVAL_MS): Promise<void> {
  if (!base || !existsSync(base)) return;
  if (await waitUntil(() => cgroupsBelow(base).length === 0, boundMs, 50)) {
    if (await removeCgroup(base, 5000)) return;
  }
  const left = [...cgroupsBelow(base), base].map((dir) => ({ dir, processes: processesIn(dir) }));
  for (const { dir } of left) {
    await killCgroup(dir);
    await removeCgroup(dir, 5000);
  }
  const what = left.map(({ dir, processes }) => `${dir}: ${processes.join(", ") || "no process"}`).join("; ");
  throw new Error(`cgroup base ${base} was still held ${boundMs} ms after the file's last test (killed and removed now): ${what}`);
}
