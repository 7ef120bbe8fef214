import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { readdir, writeFile } from "node:fs/promises";
import { release } from "node:os";
import { dirname, join, relative } from "node:path";
import { OutliveError } from "../../errors.ts";
import { readCgroup } from "../../proc/cgroup.ts";
import type { LiveProcess } from "../../proc/identity.ts";
import type { TaskLocation, TaskRecord } from "../../store/record/record.ts";
import { TASK_ID_PATTERN } from "../../store/record/task-id.ts";
import {
  cgroupControllers,
  cgroupControllersUnlessGone,
  cgroupGone,
  cgroupPopulated,
  cgroupWritable,
  cgroupWriteProblem,
  findCgroup2Mount,
  killCgroup,
  readMemoryEvents,
  removeCgroup,
  watchCgroupEmpty,
} from "../cgroup-fs.ts";
import type { SpawnerHome } from "../spawner-home.ts";
import { CgroupSpawnerHome } from "./spawner-home.ts";
import { wrapperLeaderIn } from "../wrapper-leader.ts";
import type { LocatedTask, MemoryEvents, Placement, PlacementProbe, PlacementTask, SpawnPlan } from "../placement.ts";
import { cpuMax, type TaskLimits } from "../../limits/limits.ts";

/** How long a cgroup that is still busy right after its task ended is tried again. */
const REMOVE_RETRY_MS = 10_000;

export interface CgroupV2Options {
  /** Unit/cgroup name prefix. Default `outlive`. */
  prefix?: string;
  /**
   * The directory task cgroups are made in. Default: `<mount>/<prefix>` when
   * root, else `<prefix>` inside the nearest writable ancestor of this
   * process's cgroup (a delegated subtree).
   */
  baseDir?: string;
  /** The cgroup v2 mount. Default: found in /proc/self/mountinfo. */
  mount?: string;
}

/** A non-root cgroup looked at for `cgroup.kill` (the root never has one, on any kernel). */
export interface CgroupKillEvidence {
  dir: string;
  hasKill: boolean;
}

/**
 * Pure: why the cgroup-v2 placement is refused for want of `cgroup.kill`,
 * or null when it is there. Without it (Linux before 5.14) a task's cgroup
 * cannot be ended at once, and a kill sent pid by pid races the task's
 * forks: its setsid and double-forked children could outlive the kill.
 * No non-root cgroup to look at (null) refuses nothing: the base is made
 * later and the kill checked then.
 *
 * @example
 * ```ts
 * import { cgroupKillRefusal } from "./cgroup-v2.ts";
 * console.log(cgroupKillRefusal({ dir: "/sys/fs/cgroup/init.scope", hasKill: true }, "6.1.0-28-amd64")); // null
 * console.log(cgroupKillRefusal({ dir: "/sys/fs/cgroup/init.scope", hasKill: false }, "5.10.0-33-amd64"));
 * // "no cgroup.kill in /sys/fs/cgroup/init.scope: kernel 5.10.0-33-amd64 is older than Linux 5.14, …"
 * ```
 */
export function cgroupKillRefusal(evidence: CgroupKillEvidence | null, kernel: string): string | null {
  if (evidence === null || evidence.hasKill) return null;
  return (
    `no cgroup.kill in ${evidence.dir}: kernel ${kernel} is older than Linux 5.14, so a task's cgroup cannot be ended at once ` +
    `and a kill pid by pid would race its forks (setsid and double-forked children could outlive it); ` +
    `systemd-scope still works there (systemd kills a scope pid by pid until it is empty)`
  );
}

/**
 * One look at `at` (the base, or its parent while there is no base): why tasks cannot be placed there, else the
 * controllers it offers. `missing` says the refusal was for a file that is not there (the cgroup's own, its
 * cgroup.procs or cgroup.kill), as a cgroup being removed looks; a refusal by permission is not.
 */
function lookAt(mount: string, base: string, at: string): { at: string; refusal: string | null; missing: boolean; controllers: string[] } {
  const refused = (refusal: string, missing: boolean) => ({ at, refusal, missing, controllers: [] });
  const unwritable = cgroupWriteProblem(at);
  if (unwritable) return refused(unwritable.reason, unwritable.gone);
  if (!existsSync(join(at, "cgroup.procs"))) return refused(`${at} is not a cgroup (no cgroup.procs)`, true);
  const killRefusal = cgroupKillRefusal(killEvidence(mount, at, base), release());
  if (killRefusal) return refused(killRefusal, true);
  // Read last: a base removed by now would claim no controllers.
  const controllers = cgroupControllersUnlessGone(at);
  if (controllers === null) return refused(`${at} was removed while looked at`, true);
  return { at, refusal: null, missing: false, controllers };
}

/**
 * The base if it is not the mount's root, else this process's own cgroup, else any child of the root but the
 * base (`base`): that one may be mid-removal by another supervisor, and a cgroup.kill gone with it is no evidence.
 */
function killEvidence(mount: string, existing: string, base: string): CgroupKillEvidence | null {
  const look = (dir: string) => ({ dir, hasKill: existsSync(join(dir, "cgroup.kill")) });
  if (existing !== mount) return look(existing);
  const own = readCgroup("self");
  if (own && own !== "/" && existsSync(join(mount, own, "cgroup.procs"))) return look(join(mount, own));
  try {
    const child = readdirSync(mount, { withFileTypes: true }).find((e) => e.isDirectory() && join(mount, e.name) !== base);
    return child ? look(join(mount, child.name)) : null;
  } catch {
    return null;
  }
}

/**
 * A raw cgroup v2 directory per task, `<base>/<prefix>-task-<id>`, with no
 * systemd involved. The wrapper moves itself in before any user code runs.
 *
 * @example
 * ```ts
 * import { CgroupV2Placement } from "./cgroup-v2.ts";
 * const placement = new CgroupV2Placement({ prefix: "example" });
 * const probe = await placement.probe(); // looks, makes nothing
 * console.log(probe.ok, probe.reason); // e.g. false "no writable cgroup under /sys/fs/cgroup (not root, and no delegated subtree)"
 * ```
 */
export class CgroupV2Placement implements Placement {
  readonly name = "cgroup-v2" as const;
  readonly prefix: string;
  readonly mount: string | null;
  readonly baseDir: string | null;

  constructor(options: CgroupV2Options = {}) {
    this.prefix = options.prefix ?? "outlive";
    this.mount = options.mount ?? findCgroup2Mount();
    this.baseDir = options.baseDir ?? (this.mount ? defaultBaseDir(this.mount, this.prefix) : null);
  }

  async probe(): Promise<PlacementProbe> {
    const details: Record<string, unknown> = { mount: this.mount, baseDir: this.baseDir };
    const no = (reason: string) => ({ name: this.name, ok: false, reason, details, controllers: null });
    if (!this.mount) return no("no cgroup v2 hierarchy is mounted (looked in /proc/self/mountinfo)");
    details.layout = this.mount === "/sys/fs/cgroup" ? "unified" : "hybrid";
    if (!this.baseDir) return no(`no writable cgroup under ${this.mount} (not root, and no delegated subtree)`);
    // The probe makes nothing: an existing base must be writable, a missing one creatable in its parent. Another
    // supervisor of this prefix removes the base with its last task, the moment that task's cgroup empties, and
    // makes it again for its next: the base can vanish between two of these looks, which then refuse for a file
    // that was there a moment ago. A refusal at the base for a missing file, where the parent is usable, is such
    // a removal (a live cgroup has them all, as its parent does), and the parent decides, as for a missing base.
    const parent = dirname(this.baseDir);
    let look = lookAt(this.mount, this.baseDir, existsSync(this.baseDir) ? this.baseDir : parent);
    if (look.refusal && look.missing && look.at === this.baseDir) {
      const above = lookAt(this.mount, this.baseDir, parent);
      if (!above.refusal) look = above;
    }
    if (look.refusal) return no(look.refusal);
    const controllers = look.controllers;
    details.controllers = controllers;
    details.memory = controllers.includes("memory");
    return {
      name: this.name,
      ok: true,
      reason: `task cgroups under ${this.baseDir} (${details.layout} layout; controllers: ${controllers.join(" ") || "none"})`,
      details,
      controllers,
    };
  }

  taskDir(id: string): string {
    if (!TASK_ID_PATTERN.test(id)) throw new OutliveError("E_BAD_ID", `Refusing to build a cgroup path from ${JSON.stringify(id)}`);
    return join(this.requireBase(), `${this.prefix}-task-${id}`);
  }

  async plan(task: PlacementTask): Promise<SpawnPlan> {
    const dir = this.taskDir(task.id);
    try {
      mkdirSync(this.requireBase(), { recursive: true });
      try {
        mkdirSync(dir);
      } catch (error) {
        // The base may have been removed by the release of the last other task a moment ago (ENODEV: mid-removal).
        if (!cgroupGone(error)) throw error;
        mkdirSync(this.requireBase(), { recursive: true });
        mkdirSync(dir);
      }
    } catch (error) {
      throw new OutliveError("E_PLACEMENT_UNAVAILABLE", `Cannot create the task cgroup ${dir}: ${(error as Error).message}`);
    }
    try {
      if (task.memoryMaxBytes !== null) await this.capMemory(dir, task.memoryMaxBytes);
      if (task.cpuCores != null) {
        await this.enableController(dir, "cpu", "E_LIMIT_UNSUPPORTED");
        await writeFile(join(dir, "cpu.max"), cpuMax(task.cpuCores));
      }
      if (task.pidsMax != null) {
        await this.enableController(dir, "pids", "E_LIMIT_UNSUPPORTED");
        await writeFile(join(dir, "pids.max"), String(task.pidsMax));
      }
    } catch (error) {
      await this.remove(dir);
      throw error;
    }
    return {
      prefix: [],
      env: {},
      enterCgroupProcs: join(dir, "cgroup.procs"),
      location: { cgroupDir: dir, cgroup: `/${relative(this.mount!, dir)}` },
    };
  }

  async started(record: TaskRecord): Promise<TaskLocation> {
    return record.location;
  }

  identify(record: TaskRecord, live: LiveProcess): boolean {
    return record.location.cgroup !== undefined && live.cgroup === record.location.cgroup;
  }

  async killAll(record: TaskRecord): Promise<void> {
    const dir = record.location.cgroupDir;
    if (!dir) return;
    await killCgroup(dir);
    await this.remove(dir);
  }

  async isEmpty(record: TaskRecord): Promise<boolean | null> {
    const dir = record.location.cgroupDir;
    return dir ? !(await cgroupPopulated(dir)) : null;
  }

  watchEmpty(record: TaskRecord, onEmpty: () => void, signal: AbortSignal): boolean {
    const dir = record.location.cgroupDir;
    return dir ? watchCgroupEmpty(dir, onEmpty, signal) : false;
  }

  /** A controller missing anywhere from the mount down to the base, said for the first such cgroup; the base may not exist yet. */
  async limitsProblem(limits: TaskLimits): Promise<string | null> {
    if (!this.mount || !this.baseDir) return "no cgroup v2 base directory here";
    const wanted = [limits.cpuCores !== null ? "cpu" : null, limits.pidsMax !== null ? "pids" : null].filter((c): c is string => c !== null);
    for (const d of this.chainTo(this.baseDir)) {
      if (!existsSync(d)) break;
      const have = cgroupControllers(d);
      const missing = wanted.filter((c) => !have.includes(c));
      if (missing.length > 0) {
        return `the ${missing.join(" and ")} controller${missing.length > 1 ? "s are" : " is"} not available to cgroup v2 at ${d} ` +
          `(controllers: ${have.join(" ") || "none"}; on a hybrid host they are bound to v1)`;
      }
    }
    return null;
  }

  async memoryEvents(record: TaskRecord): Promise<MemoryEvents | null> {
    const dir = record.location.cgroupDir;
    return dir ? readMemoryEvents(dir) : null;
  }

  async list(): Promise<string[]> {
    if (!this.baseDir) return [];
    const lead = `${this.prefix}-task-`;
    let names: string[];
    try {
      names = await readdir(this.baseDir);
    } catch {
      return [];
    }
    return names.filter((n) => n.startsWith(lead)).map((n) => n.slice(lead.length)).filter((id) => TASK_ID_PATTERN.test(id));
  }

  async locate(id: string): Promise<LocatedTask | null> {
    if (!this.mount || !this.baseDir) return null;
    const dir = this.taskDir(id);
    const leader = wrapperLeaderIn(dir);
    return leader && { ...leader, location: { cgroupDir: dir, cgroup: `/${relative(this.mount, dir)}` } };
  }

  async stop(id: string): Promise<void> {
    const dir = this.taskDir(id);
    await killCgroup(dir);
    await this.remove(dir);
  }

  async release(record: TaskRecord): Promise<void> {
    if (record.location.cgroupDir) await this.remove(record.location.cgroupDir);
  }

  /**
   * `<prefix>-spawner-<key>` beside the base (not in it, so the base is
   * removed with its last task as before).
   */
  spawnerHome(key: string): SpawnerHome | null {
    if (!this.mount || !this.baseDir || !/^[0-9a-f]{1,32}$/.test(key)) return null;
    const dir = join(dirname(this.baseDir), `${this.prefix}-spawner-${key}`);
    return new CgroupSpawnerHome(dir, `/${relative(this.mount, dir)}`);
  }

  async flush(): Promise<void> {
    await Promise.all(this.removals);
  }

  private readonly removals = new Set<Promise<void>>();

  /**
   * Removes a task's cgroup once empty, and the base with it when no other
   * task is left in it. The work is registered at once (see `flush`), and
   * the caller waits only for the first attempt: a cgroup still busy with
   * unreaped processes is retried in the background, so no caller waits on PID 1.
   * One still populated after that (a daemon the task left, which is the
   * user's and runs on, or on a busy machine its own last processes still
   * ending) is removed the moment it empties, by a watch that `flush` does
   * not wait for: before, it stayed until the next startup on its storage.
   */
  private remove(dir: string): Promise<void> {
    let attempted!: () => void;
    const firstAttempt = new Promise<void>((resolve) => (attempted = resolve));
    const work = (async () => {
      let gone = await removeCgroup(dir).catch(() => false);
      attempted();
      if (!gone) gone = await removeCgroup(dir, REMOVE_RETRY_MS).catch(() => false);
      if (gone) await this.removeBase();
      else this.removeWhenEmpty(dir);
    })();
    this.removals.add(work);
    void work.finally(() => this.removals.delete(work));
    return firstAttempt;
  }

  /** The base, when no task's cgroup is left in it (EBUSY otherwise, which leaves it to the last one). */
  private async removeBase(): Promise<void> {
    if (this.baseDir) await removeCgroup(this.baseDir).catch(() => false);
  }

  /**
   * Removes `dir` when its last process has gone. The watch holds no event loop open and is never cancelled:
   * it ends when the cgroup empties. Where it cannot watch, the next startup's clean-up removes it.
   */
  private removeWhenEmpty(dir: string): void {
    const onEmpty = () => {
      void removeCgroup(dir, REMOVE_RETRY_MS).then((gone) => (gone ? this.removeBase() : undefined)).catch(() => {});
    };
    watchCgroupEmpty(dir, onEmpty, new AbortController().signal);
  }

  /** memory.max needs the memory controller enabled from the mount down to the task's parent; never ignored silently. */
  private async capMemory(dir: string, bytes: number): Promise<void> {
    await this.enableController(dir, "memory", "E_MEMORY_CAP_UNSUPPORTED");
    await writeFile(join(dir, "memory.max"), String(bytes));
    if (existsSync(join(dir, "memory.swap.max"))) await writeFile(join(dir, "memory.swap.max"), "0");
    await writeFile(join(dir, "memory.oom.group"), "1");
  }

  /** The mount and every cgroup below it down to `dir`'s parent. */
  private chainTo(dir: string): string[] {
    const mount = this.mount!;
    const chain: string[] = [];
    for (let d = dirname(dir); d.startsWith(mount) && d !== mount; d = dirname(d)) chain.unshift(d);
    chain.unshift(mount);
    return chain;
  }

  /** Makes `controller` available to the task's cgroup `dir`: present, and enabled in every parent's subtree_control. */
  private async enableController(dir: string, controller: string, code: "E_MEMORY_CAP_UNSUPPORTED" | "E_LIMIT_UNSUPPORTED"): Promise<void> {
    const what = controller === "memory" ? "cap memory" : `limit ${controller === "cpu" ? "CPU" : "processes"}`;
    for (const d of this.chainTo(dir)) {
      if (!cgroupControllers(d).includes(controller)) {
        throw new OutliveError(code, `Cannot ${what}: the ${controller} controller is not available to cgroup v2 at ${d} (on a hybrid host it is bound to v1)`);
      }
      if (!readText(join(d, "cgroup.subtree_control")).split(/\s+/).includes(controller)) {
        await writeFile(join(d, "cgroup.subtree_control"), `+${controller}`).catch((error) => {
          throw new OutliveError(code, `Cannot enable the ${controller} controller at ${d}: ${error.message}`);
        });
      }
    }
  }

  private requireBase(): string {
    if (!this.baseDir) throw new OutliveError("E_PLACEMENT_UNAVAILABLE", "cgroup-v2 placement: no cgroup v2 base directory here");
    return this.baseDir;
  }
}

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

/** Root may make a top-level cgroup; anyone else uses the nearest ancestor it can write (a delegated subtree). */
function defaultBaseDir(mount: string, prefix: string): string | null {
  if (process.getuid?.() === 0) return join(mount, prefix);
  let own: string | null = null;
  try {
    own = readCgroup("self");
  } catch {
    return null;
  }
  if (!own) return null;
  for (let d = dirname(join(mount, own)); d.startsWith(mount) && d !== mount; d = dirname(d)) {
    // Not delegated to us: try higher up.
    if (cgroupWritable(d) === null) return join(d, prefix);
  }
  return null;
}
