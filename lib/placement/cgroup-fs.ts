import { accessSync, closeSync, constants, existsSync, openSync, readFileSync, watch } from "node:fs";
import { rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { waitUntil } from "../kill/process-group.ts";
import type { MemoryEvents } from "./placement.ts";

/**
 * The pids directly in cgroup `dir` (not in its children); none when it
 * cannot be read (removed, say).
 *
 * @example
 * ```ts
 * import { cgroupProcs, findCgroup2Mount } from "./cgroup-fs.ts";
 * const mount = findCgroup2Mount();
 * console.log(mount === null || Array.isArray(cgroupProcs(mount))); // true
 * console.log(cgroupProcs("/nonexistent/cgroup")); // []
 * ```
 */
export function cgroupProcs(dir: string): number[] {
  return readCgroupFile(dir, "cgroup.procs").split("\n").filter(Boolean).map(Number);
}

/**
 * The controllers cgroup `dir` offers its children (`cgroup.controllers`);
 * none when it cannot be read.
 *
 * @example
 * ```ts
 * import { cgroupControllers } from "./cgroup-fs.ts";
 * console.log(cgroupControllers("/nonexistent/cgroup")); // []
 * ```
 */
export function cgroupControllers(dir: string): string[] {
  return cgroupControllersUnlessGone(dir) ?? [];
}

/** As `cgroupControllers`, but null when the cgroup is gone (`cgroupGone`): a removed cgroup offers no "none". */
export function cgroupControllersUnlessGone(dir: string): string[] | null {
  try {
    return readFileSync(join(dir, "cgroup.controllers"), "utf8").split(/\s+/).filter(Boolean);
  } catch (error) {
    return cgroupGone(error) ? null : [];
  }
}

function readCgroupFile(dir: string, name: string): string {
  try {
    return readFileSync(join(dir, name), "utf8");
  } catch {
    return "";
  }
}

/**
 * Where cgroup v2 is mounted, from mountinfo: `/sys/fs/cgroup` on a pure v2
 * host, `/sys/fs/cgroup/unified` on a hybrid one. Null when there is none.
 *
 * @example
 * ```ts
 * import { findCgroup2Mount } from "./cgroup-fs.ts";
 * console.log(findCgroup2Mount()); // "/sys/fs/cgroup" on a pure v2 host; null without cgroup v2
 * console.log(findCgroup2Mount("/no/such/mountinfo")); // null
 * ```
 */
export function findCgroup2Mount(mountinfo = "/proc/self/mountinfo"): string | null {
  let text: string;
  try {
    text = readFileSync(mountinfo, "utf8");
  } catch {
    return null;
  }
  const mounts: string[] = [];
  for (const line of text.split("\n")) {
    // fields: id parent major:minor root mountpoint options [optional…] - fstype source superoptions
    const sep = line.indexOf(" - ");
    if (sep < 0) continue;
    if (line.slice(sep + 3).split(" ")[0] !== "cgroup2") continue;
    const fields = line.slice(0, sep).split(" ");
    if (fields[3] !== "/") continue; // a bind of a sub-tree, not the hierarchy's root
    mounts.push(unescapeMountPath(fields[4]));
  }
  mounts.sort((a, b) => preference(a) - preference(b));
  return mounts[0] ?? null;
}

function preference(path: string): number {
  return path === "/sys/fs/cgroup" ? 0 : path === "/sys/fs/cgroup/unified" ? 1 : 2;
}

function unescapeMountPath(p: string): string {
  return p.replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8)));
}

/**
 * Why this process cannot make cgroups in `dir` and move processes into
 * them, or null when it can. It opens `cgroup.procs` for writing (nothing is
 * written): access(2)-style checks read mode bits, which Deno's emulation
 * applies to root too, although root writes to the read-only-looking
 * cgroup root all the same.
 */
export function cgroupWritable(dir: string): string | null {
  return cgroupWriteProblem(dir)?.reason ?? null;
}

/**
 * What `cgroupWritable` says, and whether it is because the cgroup is gone (`cgroupGone`: removed, or mid-removal
 * between the lookup of its `cgroup.procs` and the open) rather than refused.
 */
export function cgroupWriteProblem(dir: string): { reason: string; gone: boolean } | null {
  try {
    if (process.getuid?.() !== 0) accessSync(dir, constants.W_OK);
    closeSync(openSync(join(dir, "cgroup.procs"), "r+"));
    return null;
  } catch (error) {
    return { reason: `cannot write ${dir}: ${(error as Error).message}`, gone: cgroupGone(error) };
  }
}

/** `populated` from `cgroup.events`: true while any process is in the cgroup or below. A missing cgroup is empty. */
export async function cgroupPopulated(dir: string): Promise<boolean> {
  try {
    // A read of a kernel file of a few bytes: the thread pool's round trips cost more than the read (asked
    // once for each of 1,000 adopted tasks as their watches start).
    return /^populated 1$/m.test(readFileSync(join(dir, "cgroup.events"), "utf8"));
  } catch (error) {
    if (cgroupGone(error)) return false;
    throw error;
  }
}

/**
 * ENOENT: the cgroup is gone. ENODEV: it was removed between open and
 * read/write, which systemd does to a scope the moment it empties.
 */
export function cgroupGone(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === "ENOENT" || code === "ENODEV";
}

/**
 * Ends every process in the cgroup at once (`cgroup.kill`, Linux >= 5.14)
 * and waits until `cgroup.events` says it is empty. Escaped processes
 * (setsid, double fork) are in the cgroup all the same. On an older kernel
 * (no `cgroup.kill` in `dir`) it writes nothing and answers at once whether
 * the cgroup is empty already, so the caller's own kill (systemd's, pid by
 * pid) runs without a wait that could not end.
 */
export async function killCgroup(dir: string, timeoutMs = 5000): Promise<boolean> {
  if (!existsSync(dir)) return true;
  if (!existsSync(join(dir, "cgroup.kill"))) return !(await cgroupPopulated(dir));
  try {
    await writeFile(join(dir, "cgroup.kill"), "1");
  } catch (error) {
    if (!cgroupGone(error)) throw error;
  }
  return waitUntil(async () => !(await cgroupPopulated(dir)), timeoutMs, 10);
}

/** How long a still-populated cgroup is waited for: a wrapper that has just written its exit marker is still exiting. */
const POPULATED_WAIT_MS = 2000;

/**
 * Removes an empty cgroup directory; true once it is gone. A cgroup whose
 * last processes died a moment ago stays busy (EBUSY) until their parent
 * reaps them, which for adopted tasks is PID 1 and may take seconds, so a
 * busy one is tried again every 50 ms for up to `retryMs`. One that still
 * has processes is waited for only briefly (the task's own last exit), so
 * a daemon left behind does not hold a caller for the whole `retryMs`.
 */
export async function removeCgroup(dir: string, retryMs = 0): Promise<boolean> {
  const start = Date.now();
  for (;;) {
    try {
      await rmdir(dir);
      return true;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === "ENOENT") return true;
      const waited = Date.now() - start;
      if (code !== "EBUSY" || waited >= retryMs) return false;
      if (waited >= Math.min(retryMs, POPULATED_WAIT_MS) && (await cgroupPopulated(dir))) return false;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Calls `onEmpty` once when the cgroup has emptied. The kernel signals
 * every change of `cgroup.events` as a file modification, so this wakes at
 * the moment rather than on a timer. Returns false when it cannot watch.
 */
export function watchCgroupEmpty(dir: string, onEmpty: () => void, signal: AbortSignal): boolean {
  let done = false;
  const check = () => {
    if (done) return;
    cgroupPopulated(dir).then((populated) => {
      if (!populated && !done) {
        done = true;
        watcher?.close();
        onEmpty();
      }
    }, () => {});
  };
  let watcher: ReturnType<typeof watch> | undefined;
  try {
    watcher = watch(join(dir, "cgroup.events"), { persistent: false }, check);
    watcher.on("error", () => watcher?.close());
  } catch {
    return false;
  }
  signal.addEventListener("abort", () => {
    done = true;
    watcher?.close();
  }, { once: true });
  check();
  return true;
}

/** OOM kills and cap hits from `memory.events`; null when the cgroup has no memory accounting. */
export async function readMemoryEvents(dir: string): Promise<MemoryEvents | null> {
  const path = join(dir, "memory.events");
  // Asked for every task at replay and at each end, and absent wherever the memory controller is off (every
  // cgroup here): an absence must cost no exception, and a small file no thread-pool round trip (1,000
  // adopted tasks spent 0.2-0.6 s in these rejections, profiled in the container).
  if (!existsSync(path)) return null;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return null;
  }
  const field = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
  return { oomKill: field("oom_kill"), max: field("max") };
}
