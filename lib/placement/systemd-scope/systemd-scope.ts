import { accessSync, constants, existsSync, readFileSync, watch } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describeValue, OutliveError } from "../../errors.ts";
import type { LiveProcess } from "../../proc/identity.ts";
import type { TaskLocation, TaskRecord } from "../../store/record/record.ts";
import { TASK_ID_PATTERN } from "../../store/record/task-id.ts";
import { cgroupPopulated, findCgroup2Mount, killCgroup, readMemoryEvents, watchCgroupEmpty } from "../cgroup-fs.ts";
import type { LocatedTask, MemoryEvents, Placement, PlacementProbe, PlacementTask, SpawnPlan } from "../placement.ts";
import type { SpawnerHome } from "../spawner-home.ts";
import { SystemdSpawnerHome } from "./spawner-home.ts";
import { cpuQuota, type TaskLimits } from "../../limits/limits.ts";
import { wrapperLeaderIn } from "../wrapper-leader.ts";
import { EXPAND_ENVIRONMENT_SINCE, firstLine, type ManagerKind, runBounded, SystemdManager } from "./systemd-manager.ts";

export interface SystemdScopeOptions {
  /** Unit prefix: `<prefix>-task-<id>.scope` in `<prefix>.slice`. Default `outlive`. */
  prefix?: string;
  /** `auto` (default): the user manager when reachable, else the system manager when root. */
  manager?: "auto" | ManagerKind;
  /**
   * TimeoutStopSec of each scope: how long a stop by systemd (a shutdown, `systemctl stop`) waits between TERM
   * and KILL. Default 10 s, at least 1. The shim waits for the host's answer whether it is stopping until a
   * second before that KILL, and writes the exit code after it: a shutdown on a slow machine needs the time
   * (with 2 s, a TCG guest's clean reboot left the task's end `lost` in CI; with 5 s, the end without the
   * shutdown's word). Only a command that ignores TERM makes a stop wait this long.
   */
  stopTimeoutSeconds?: number;
  /** Bound on every systemctl call. Default 10000 ms. */
  commandTimeoutMs?: number;
}

export { EXPAND_ENVIRONMENT_SINCE } from "./systemd-manager.ts";
/** SystemdScopeOptions.stopTimeoutSeconds' default. */
const DEFAULT_STOP_TIMEOUT_SECONDS = 10;

/** What the shim gets to hear whether the host is stopping: the stop timeout less a second to write the end, at least half a second. */
export function hostAskMs(stopTimeoutSeconds: number): number {
  return Math.max(500, Math.round(stopTimeoutSeconds * 1000) - 1000);
}

/** How long `started` waits for systemd-run to exec the wrapper once the scope holds it. */
const EXEC_WAIT_MS = 5000;

/**
 * A transient systemd scope per task, owned by the user (or system)
 * manager and so outside the supervisor's cgroup. systemd-run registers the
 * scope and then execs the wrapper, so the task is in it before any user code runs.
 *
 * @example
 * ```ts
 * import { SystemdScopePlacement } from "./systemd-scope.ts";
 * const placement = new SystemdScopePlacement({ prefix: "example", commandTimeoutMs: 2000 });
 * console.log(placement.unitName("t-0123456789abcdef")); // "example-task-t-0123456789abcdef.scope"
 * // Runs `systemd-run --version` and asks the manager for its version; starts no unit.
 * const probe = await placement.probe();
 * console.log(probe.ok, probe.reason); // e.g. true "systemd 257, user manager reachable"
 * ```
 */
export class SystemdScopePlacement implements Placement {
  readonly name = "systemd-scope" as const;
  readonly prefix: string;
  private readonly options: Required<SystemdScopeOptions>;
  private resolved: { manager: SystemdManager; version: number } | null = null;
  /** Why a memory cap would not be enforced here ("" when it would); asked once. */
  private memoryProblem: Promise<string> | null = null;
  /** OOM counters read while a capped scope still existed: systemd removes its cgroup, memory.events with it, once it empties. */
  private readonly oomSeen = new Map<string, MemoryEvents>();

  constructor(options: SystemdScopeOptions = {}) {
    const stop = options.stopTimeoutSeconds;
    // 0 would be systemd's "no timeout" (a stop that waits for ever), not a quick one.
    if (stop !== undefined && !(typeof stop === "number" && Number.isFinite(stop) && stop >= 1)) {
      throw new OutliveError("E_BAD_OPTION", `Expected the \`stopTimeoutSeconds\` option to be a number of seconds of at least 1, got ${describeValue(stop)}`);
    }
    this.options = {
      prefix: options.prefix ?? "outlive",
      manager: options.manager ?? "auto",
      stopTimeoutSeconds: options.stopTimeoutSeconds ?? DEFAULT_STOP_TIMEOUT_SECONDS,
      commandTimeoutMs: options.commandTimeoutMs ?? 10_000,
    };
    this.prefix = this.options.prefix;
  }

  async probe(): Promise<PlacementProbe> {
    const details: Record<string, unknown> = {};
    const no = (reason: string) => ({ name: this.name, ok: false, reason, details, controllers: null });
    const kinds: ManagerKind[] = this.options.manager === "auto" ? ["user", "system"] : [this.options.manager];
    // Every supervisor open probes (a CLI command's too): where no manager can be reached at all, say so without a process spawned.
    const unreachable = kinds.map((kind) => new SystemdManager(kind, this.options.commandTimeoutMs).unreachable());
    if (unreachable.every((why) => why !== null)) {
      if (!onPath("systemd-run")) return no("systemd-run is not installed or does not run (not found on PATH)");
      return no(kinds.map((kind, i) => `${kind} manager: ${unreachable[i]}`).join("; "));
    }
    const managers = kinds.map((kind) => new SystemdManager(kind, this.options.commandTimeoutMs));
    // The first manager is asked while systemd-run tells its version: one after the other, the two processes were
    // about 20 ms of every supervisor's open in the container, and so of every restart before anything is adopted.
    const firstProblem = managers[0].problem();
    const version = await runBounded("systemd-run", ["--version"], this.options.commandTimeoutMs).catch((e: Error) => e);
    if (version instanceof Error) return no(`systemd-run is not installed or does not run (${firstLine(version.message)})`);
    const v = Number(/systemd (\d+)/.exec(version)?.[1]);
    details.version = v;
    if (!Number.isInteger(v)) return no(`cannot read the systemd version from ${JSON.stringify(firstLine(version))}`);
    if (v < 236) return no(`systemd ${v} is too old (236 or later is needed for --collect)`);
    const why: string[] = [];
    for (const [i, manager] of managers.entries()) {
      const kind = manager.kind;
      const problem = i === 0 ? await firstProblem : await manager.problem();
      if (!problem) {
        this.resolved = { manager, version: v };
        details.manager = kind;
        const mount = findCgroup2Mount();
        const found = mount ? await manager.controllers(mount) : "no cgroup v2 hierarchy is mounted";
        const controllers = typeof found === "string" ? [] : found.list;
        if (typeof found === "string") details.controllersProblem = found;
        return { name: this.name, ok: true, reason: `systemd ${v}, ${kind} manager reachable`, details, controllers };
      }
      why.push(`${kind} manager: ${problem}`);
    }
    return no(why.join("; "));
  }

  unitName(id: string): string {
    if (!TASK_ID_PATTERN.test(id)) throw new OutliveError("E_BAD_ID", `Refusing to build a unit name from ${JSON.stringify(id)}`);
    return `${this.prefix}-task-${id}.scope`;
  }

  /**
   * `systemd-run [--user] --scope …` in front of the wrapper. A capped scope
   * is not `--collect`ed: one the OOM killer ended stays loaded as failed
   * (Result=oom-kill) until `release`, so the kill can be told even when no
   * supervisor ran at the time.
   */
  async plan(task: PlacementTask): Promise<SpawnPlan> {
    const { manager, version } = await this.requireResolved();
    const unit = this.unitName(task.id);
    const capped = task.memoryMaxBytes !== null;
    if (capped) {
      this.memoryProblem ??= manager.memoryCapProblem(findCgroup2Mount()).then((p) => p ?? "", (e: Error) => e.message);
      const problem = await this.memoryProblem;
      if (problem) throw new OutliveError("E_MEMORY_CAP_UNSUPPORTED", `Cannot cap memory in a systemd scope here: ${problem}`);
    }
    const prefix = [
      "systemd-run",
      ...(manager.kind === "user" ? ["--user"] : []),
      "--scope",
      ...(capped ? [] : ["--collect"]),
      "--quiet",
      `--unit=${unit}`,
      // Named for the task in `systemctl status` and the journal, where systemd would show the whole command line.
      `--description=outlive task ${task.id}`,
      `--slice=${this.prefix}.slice`,
      "-p",
      `RuntimeMaxSec=${Math.max(1, Math.ceil(task.backstopSeconds))}`,
      "-p",
      `TimeoutStopSec=${this.options.stopTimeoutSeconds}s`,
    ];
    // OOMPolicy=kill makes systemd set memory.oom.group=1 before the process joins: one OOM kill ends the whole task.
    if (capped) prefix.push("-p", `MemoryMax=${task.memoryMaxBytes}`, "-p", "MemorySwapMax=0", "-p", "OOMPolicy=kill");
    if (task.cpuCores != null) prefix.push("-p", `CPUQuota=${cpuQuota(task.cpuCores)}`);
    if (task.pidsMax != null) prefix.push("-p", `TasksMax=${task.pidsMax}`);
    if (version >= EXPAND_ENVIRONMENT_SINCE) prefix.push("--expand-environment=no");
    return { prefix, env: {}, enterCgroupProcs: null, location: { unit, manager: manager.kind }, hostAskMs: hostAskMs(this.options.stopTimeoutSeconds) };
  }

  /**
   * The scope holds systemd-run a moment before it execs the wrapper; a TERM
   * then would end systemd-run itself, with no wrapper to run traps or write
   * the exit code. So this waits (bounded) for the exec before `run` resolves.
   */
  async started(record: TaskRecord, live: LiveProcess): Promise<TaskLocation> {
    await waitForExec(live.pid, EXEC_WAIT_MS);
    const mount = findCgroup2Mount();
    const location: TaskLocation = { ...record.location, cgroup: live.cgroup ?? undefined };
    if (mount && live.cgroup) location.cgroupDir = join(mount, live.cgroup);
    if (record.memoryMaxBytes !== null && location.cgroupDir) {
      // OOMPolicy=kill set it already; written again for managers that ignore the policy on scopes.
      await writeFile(join(location.cgroupDir, "memory.oom.group"), "1").catch(() => {});
    }
    return location;
  }

  async limitsProblem(limits: TaskLimits): Promise<string | null> {
    const { manager } = await this.requireResolved();
    const wanted = [limits.cpuCores !== null ? "cpu" : null, limits.pidsMax !== null ? "pids" : null].filter((c): c is string => c !== null);
    return manager.controllerProblem(findCgroup2Mount(), wanted);
  }

  identify(record: TaskRecord, live: LiveProcess): boolean {
    const unit = record.location.unit;
    return unit !== undefined && live.cgroup !== null && live.cgroup.endsWith(`/${unit}`);
  }

  /** `cgroup.kill` on the scope, done only when `cgroup.events` says `populated 0`; systemd's SIGKILL if that did not empty it. */
  async killAll(record: TaskRecord): Promise<void> {
    const dir = await this.cgroupDirOf(record);
    if (dir && (await killCgroup(dir))) return;
    const unit = record.location.unit;
    if (!unit) return;
    await this.managerOf(record).systemctl(["kill", "--signal=SIGKILL", unit]).catch(() => {});
    if (dir) await killCgroup(dir);
  }

  async isEmpty(record: TaskRecord): Promise<boolean | null> {
    const dir = await this.cgroupDirOf(record);
    // No cgroup on record and none loaded: systemd removes a scope's cgroup once it is empty.
    return dir ? !(await cgroupPopulated(dir)) : record.location.unit ? true : null;
  }

  watchEmpty(record: TaskRecord, onEmpty: () => void, signal: AbortSignal): boolean {
    const dir = record.location.cgroupDir;
    if (!dir) return false;
    if (record.memoryMaxBytes !== null) this.watchOom(record.id, dir, signal);
    return watchCgroupEmpty(dir, onEmpty, signal);
  }

  /**
   * The scope's `memory.events` while it exists; once systemd has removed
   * it, the counter read before that (the watch in `watchEmpty`), and else
   * systemd's own word: `Result=oom-kill` on the failed unit, kept loaded
   * because capped scopes are not `--collect`ed.
   */
  async memoryEvents(record: TaskRecord): Promise<MemoryEvents | null> {
    const dir = record.location.cgroupDir;
    const fresh = dir ? await readMemoryEvents(dir) : null;
    if (fresh) {
      if (fresh.oomKill > 0) this.oomSeen.set(record.id, fresh);
      return fresh;
    }
    if (record.memoryMaxBytes === null || !record.location.unit) return null;
    const seen = this.oomSeen.get(record.id);
    if (seen) return seen;
    const unit = record.location.unit;
    const result = await this.managerOf(record).unitProperty(unit, "Result").catch(() => null);
    if (result !== "oom-kill") return null;
    return {
      oomKill: 1,
      max: 0,
      detail: `systemd's Result=oom-kill for ${unit}; its memory.events, with the exact oom_kill count, was removed with the scope`,
    };
  }

  async locate(id: string): Promise<LocatedTask | null> {
    const mount = findCgroup2Mount();
    const { manager } = await this.requireResolved();
    const unit = this.unitName(id);
    const cg = await manager.unitProperty(unit, "ControlGroup").catch(() => null);
    if (!mount || !cg) return null;
    const cgroupDir = join(mount, cg);
    const leader = wrapperLeaderIn(cgroupDir);
    return leader && { ...leader, location: { unit, manager: manager.kind, cgroup: cg, cgroupDir } };
  }

  async list(): Promise<string[]> {
    const { manager } = await this.requireResolved();
    const out = await manager.systemctl(["list-units", "--all", "--plain", "--no-legend", "--no-pager", `${this.prefix}-task-*.scope`]);
    const lead = `${this.prefix}-task-`;
    // A failed unit's line may begin with a status mark, so the unit name is looked for among the words.
    return out
      .split("\n")
      .map((line) => line.trim().split(/\s+/).find((w) => w.startsWith(lead) && w.endsWith(".scope")))
      .filter((unit): unit is string => unit !== undefined)
      .map((unit) => unit.slice(lead.length, -".scope".length))
      .filter((id) => TASK_ID_PATTERN.test(id));
  }

  /** systemd's stop (TERM, TimeoutStopSec, KILL to the whole scope), then forget a failed result. */
  async stop(id: string): Promise<void> {
    const { manager } = await this.requireResolved();
    const unit = this.unitName(id);
    await manager.systemctl(["stop", unit]).catch(() => {});
    await manager.systemctl(["reset-failed", unit]).catch(() => {});
    this.oomSeen.delete(id);
  }

  /** A transient service `<prefix>-spawner-<key>.service` in the slice, which systemd forks; null before the probe found a manager. */
  spawnerHome(key: string): SpawnerHome | null {
    if (!this.resolved || !/^[0-9a-f]{1,32}$/.test(key)) return null;
    return new SystemdSpawnerHome(this.resolved.manager, `${this.prefix}-spawner-${key}.service`, `${this.prefix}.slice`, this.resolved.version);
  }

  async flush(): Promise<void> {}

  /** An uncapped scope is `--collect`ed by systemd; a capped one that failed is kept until its end is recorded, which is now. */
  async release(record: TaskRecord): Promise<void> {
    this.oomSeen.delete(record.id);
    if (record.memoryMaxBytes === null || !record.location.unit) return;
    await this.managerOf(record).systemctl(["reset-failed", record.location.unit]).catch(() => {});
  }

  private watchOom(id: string, dir: string, signal: AbortSignal): void {
    // The kernel signals every change of memory.events; an OOM kill changes it before the scope empties.
    const read = () => {
      void readMemoryEvents(dir).then((events) => {
        if (events && events.oomKill > 0) this.oomSeen.set(id, events);
      });
    };
    // No memory controller (no file): memoryEvents still asks systemd afterwards, and no watch throws.
    if (!existsSync(join(dir, "memory.events"))) return;
    try {
      const watcher = watch(join(dir, "memory.events"), { persistent: false }, read);
      watcher.on("error", () => watcher.close());
      signal.addEventListener("abort", () => watcher.close(), { once: true });
    } catch {
      // No memory.events to watch: memoryEvents still asks systemd afterwards.
    }
  }

  /** The scope's cgroup directory: from the record, or (when the supervisor stopped before recording it) from systemd. */
  private async cgroupDirOf(record: TaskRecord): Promise<string | null> {
    if (record.location.cgroupDir) return record.location.cgroupDir;
    const mount = findCgroup2Mount();
    if (!mount || !record.location.unit) return null;
    const cg = await this.managerOf(record).unitProperty(record.location.unit, "ControlGroup").catch(() => null);
    return cg ? join(mount, cg) : null;
  }

  private managerOf(record: TaskRecord): SystemdManager {
    const kind = record.location.manager ?? this.resolved?.manager.kind ?? "user";
    return this.resolved?.manager.kind === kind ? this.resolved.manager : new SystemdManager(kind, this.options.commandTimeoutMs);
  }

  private async requireResolved(): Promise<{ manager: SystemdManager; version: number }> {
    if (!this.resolved) {
      const probe = await this.probe();
      if (!probe.ok) throw new OutliveError("E_PLACEMENT_UNAVAILABLE", `systemd-scope placement: ${probe.reason}`);
    }
    return this.resolved!;
  }
}

/** Waits until `pid` is no longer systemd-run (it exec'd) or is gone; bounded. */
async function waitForExec(pid: number, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    let comm: string;
    try {
      comm = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
    } catch {
      return;
    }
    if (comm !== "systemd-run") return;
    // The exec follows the job's completion within a few ms; run() waits on this, so poll finely.
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** Whether an executable named `name` is in one of $PATH's directories (what a spawn by name would find). */
function onPath(name: string): boolean {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    if (!dir) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      // not here
    }
  }
  return false;
}
