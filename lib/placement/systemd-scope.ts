import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { OutliveError } from "../errors.ts";
import type { LiveProcess } from "../proc/identity.ts";
import type { TaskLocation, TaskRecord } from "../store/record.ts";
import { TASK_ID_PATTERN } from "../store/task-id.ts";
import { cgroupPopulated, findCgroup2Mount, killCgroup, readMemoryEvents, watchCgroupEmpty } from "./cgroup-fs.ts";
import type { MemoryEvents, Placement, PlacementProbe, PlacementTask, SpawnPlan } from "./placement.ts";

export interface SystemdScopeOptions {
  /** Unit prefix: `<prefix>-task-<id>.scope` in `<prefix>.slice`. Default `outlive`. */
  prefix?: string;
  /** `auto` (default): the user manager when reachable, else the system manager when root. */
  manager?: "auto" | "user" | "system";
  /** TimeoutStopSec of each scope: how long a stop by systemd waits between TERM and KILL. Default 2 s. */
  stopTimeoutSeconds?: number;
  /** Bound on every systemctl call. Default 10000 ms. */
  commandTimeoutMs?: number;
}

/** systemd 254 added `--expand-environment=`; 252 rejects it, and does not expand. */
export const EXPAND_ENVIRONMENT_SINCE = 254;

/**
 * A transient systemd scope per task, owned by the user (or system)
 * manager and so outside the supervisor's cgroup. systemd-run registers the
 * scope and then execs the wrapper, so the task is in it before any user code runs.
 */
export class SystemdScopePlacement implements Placement {
  readonly name = "systemd-scope" as const;
  readonly prefix: string;
  private readonly options: Required<SystemdScopeOptions>;
  private resolved: { manager: "user" | "system"; version: number } | null = null;

  constructor(options: SystemdScopeOptions = {}) {
    this.options = {
      prefix: options.prefix ?? "outlive",
      manager: options.manager ?? "auto",
      stopTimeoutSeconds: options.stopTimeoutSeconds ?? 2,
      commandTimeoutMs: options.commandTimeoutMs ?? 10_000,
    };
    this.prefix = this.options.prefix;
  }

  async probe(): Promise<PlacementProbe> {
    const details: Record<string, unknown> = {};
    const no = (reason: string) => ({ name: this.name, ok: false, reason, details });
    const version = await this.run("systemd-run", ["--version"]).catch((e: Error) => e);
    if (version instanceof Error) return no(`systemd-run is not installed or does not run (${firstLine(version.message)})`);
    const v = Number(/systemd (\d+)/.exec(version)?.[1]);
    details.version = v;
    if (!Number.isInteger(v)) return no(`cannot read the systemd version from ${JSON.stringify(firstLine(version))}`);
    if (v < 236) return no(`systemd ${v} is too old (236 or later is needed for --collect)`);
    const candidates: Array<"user" | "system"> =
      this.options.manager === "auto" ? ["user", "system"] : [this.options.manager];
    const why: string[] = [];
    for (const manager of candidates) {
      const problem = await this.managerProblem(manager);
      if (!problem) {
        this.resolved = { manager, version: v };
        details.manager = manager;
        return { name: this.name, ok: true, reason: `systemd ${v}, ${manager} manager reachable`, details };
      }
      why.push(`${manager} manager: ${problem}`);
    }
    return no(why.join("; "));
  }

  unitName(id: string): string {
    if (!TASK_ID_PATTERN.test(id)) throw new OutliveError("E_BAD_ID", `Refusing to build a unit name from ${JSON.stringify(id)}`);
    return `${this.prefix}-task-${id}.scope`;
  }

  async plan(task: PlacementTask): Promise<SpawnPlan> {
    const { manager, version } = await this.requireResolved();
    const unit = this.unitName(task.id);
    const prefix = [
      "systemd-run",
      ...(manager === "user" ? ["--user"] : []),
      "--scope",
      "--collect",
      "--quiet",
      `--unit=${unit}`,
      `--slice=${this.prefix}.slice`,
      "-p",
      `RuntimeMaxSec=${Math.max(1, Math.ceil(task.backstopSeconds))}`,
      "-p",
      `TimeoutStopSec=${this.options.stopTimeoutSeconds}s`,
    ];
    if (task.memoryMaxBytes !== null) prefix.push("-p", `MemoryMax=${task.memoryMaxBytes}`, "-p", "MemorySwapMax=0");
    if (version >= EXPAND_ENVIRONMENT_SINCE) prefix.push("--expand-environment=no");
    return { prefix, env: {}, enterCgroupProcs: null, location: { unit, manager } };
  }

  async started(record: TaskRecord, live: LiveProcess): Promise<TaskLocation> {
    const mount = findCgroup2Mount();
    const location: TaskLocation = { ...record.location, cgroup: live.cgroup ?? undefined };
    if (mount && live.cgroup) location.cgroupDir = join(mount, live.cgroup);
    if (record.memoryMaxBytes !== null && location.cgroupDir) {
      // One OOM kill ends the whole task, not one process of it.
      await writeFile(join(location.cgroupDir, "memory.oom.group"), "1").catch(() => {});
    }
    return location;
  }

  identify(record: TaskRecord, live: LiveProcess): boolean {
    const unit = record.location.unit;
    return unit !== undefined && live.cgroup !== null && live.cgroup.endsWith(`/${unit}`);
  }

  async killAll(record: TaskRecord): Promise<void> {
    if (record.location.cgroupDir && existsSync(record.location.cgroupDir)) {
      await killCgroup(record.location.cgroupDir);
    } else if (record.location.unit) {
      await this.systemctl(record.location.manager ?? "user", ["kill", "--signal=SIGKILL", record.location.unit]).catch(() => {});
    }
  }

  async isEmpty(record: TaskRecord): Promise<boolean | null> {
    return record.location.cgroupDir ? !(await cgroupPopulated(record.location.cgroupDir)) : null;
  }

  watchEmpty(record: TaskRecord, onEmpty: () => void, signal: AbortSignal): boolean {
    return record.location.cgroupDir ? watchCgroupEmpty(record.location.cgroupDir, onEmpty, signal) : false;
  }

  async memoryEvents(record: TaskRecord): Promise<MemoryEvents | null> {
    return record.location.cgroupDir ? readMemoryEvents(record.location.cgroupDir) : null;
  }

  async list(): Promise<string[]> {
    const { manager } = await this.requireResolved();
    const out = await this.systemctl(manager, [
      "list-units",
      "--all",
      "--plain",
      "--no-legend",
      "--no-pager",
      `${this.prefix}-task-*.scope`,
    ]);
    const lead = `${this.prefix}-task-`;
    return out
      .split("\n")
      .map((line) => line.trim().split(/\s+/)[0])
      .filter((unit) => unit?.startsWith(lead) && unit.endsWith(".scope"))
      .map((unit) => unit.slice(lead.length, -".scope".length))
      .filter((id) => TASK_ID_PATTERN.test(id));
  }

  async stop(id: string): Promise<void> {
    const { manager } = await this.requireResolved();
    await this.systemctl(manager, ["stop", this.unitName(id)]).catch(() => {});
  }

  async flush(): Promise<void> {}

  async release(): Promise<void> {
    // --collect: systemd removes the scope once it is empty, whatever its result.
  }

  private async managerProblem(manager: "user" | "system"): Promise<string | null> {
    if (manager === "user") {
      const dir = process.env.XDG_RUNTIME_DIR;
      if (!dir) return "XDG_RUNTIME_DIR is not set";
      if (!existsSync(join(dir, "systemd", "private")) && !existsSync(join(dir, "bus"))) {
        return `no user manager socket in ${dir}`;
      }
    } else {
      if (process.getuid?.() !== 0) return "not root";
      if (!existsSync("/run/systemd/system")) return "PID 1 is not systemd (/run/systemd/system is missing)";
    }
    try {
      await this.systemctl(manager, ["show", "--property=Version"]);
      return null;
    } catch (error) {
      return `systemctl does not answer (${firstLine((error as Error).message)})`;
    }
  }

  private async requireResolved(): Promise<{ manager: "user" | "system"; version: number }> {
    if (!this.resolved) {
      const probe = await this.probe();
      if (!probe.ok) throw new OutliveError("E_PLACEMENT_UNAVAILABLE", `systemd-scope placement: ${probe.reason}`);
    }
    return this.resolved!;
  }

  private systemctl(manager: "user" | "system", args: string[]): Promise<string> {
    return this.run("systemctl", [...(manager === "user" ? ["--user"] : []), ...args]);
  }

  private run(file: string, args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(file, args, { timeout: this.options.commandTimeoutMs, encoding: "utf8" }, (error, stdout, stderr) => {
        if (error) reject(new Error(`${file} ${args.join(" ")}: ${stderr.trim() || error.message}`));
        else resolve(stdout);
      });
    });
  }
}

function firstLine(s: string): string {
  return s.split("\n")[0].trim();
}
