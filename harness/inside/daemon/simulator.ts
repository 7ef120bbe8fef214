import { ModuleProcess, type ModuleLaunch } from "../module/module-client.ts";
import { ForeignModule } from "./foreign-module.ts";
import { checkForeignModule, type ForeignModuleSpec } from "./foreign-spec.ts";
import { ModuleCgroup } from "./module-cgroup.ts";
import type { ModuleKillChoice, ModuleKillMethod } from "./module-kill.ts";

/** What the daemon runs as its module: outlive's own, or any command (`module` option). */
export type DaemonModule = ModuleProcess | ForeignModule;

export interface SimulatorOptions extends Omit<ModuleLaunch, "wrap"> {
  /** Any command as the module instead of outlive's (then `storage`, `placement`… are not passed to it). */
  module?: ForeignModuleSpec;
  /** Name of the module cgroup under the cgroup v2 mount. Default `<prefix>-module-<pid>`. */
  moduleCgroupName?: string;
  /** Parent directory of the module cgroup. Default: the cgroup v2 mount. */
  moduleCgroupParent?: string;
  /**
   * How a restart ends the module's cgroup: `cgroup.kill`, or
   * `freeze-and-kill` (freeze, SIGKILL each pid, thaw: what a daemon does on
   * a kernel before 5.14). Default `auto`: `cgroup.kill` where the kernel
   * has it, else freeze-and-kill.
   */
  moduleKill?: ModuleKillChoice;
  /** How long a draining module gets to exit before SIGTERM. Default 5000 ms. */
  drainWaitMs?: number;
  /** How long a module told to stop (`disable`, `shutdown`: it ends every task first) gets to exit before SIGKILL. Default 30 000 ms. */
  stopWaitMs?: number;
}

/** One restart as the daemon did it, for reports and timelines. */
export interface RestartMark {
  at: string;
  kind: "restart" | "crash" | "stop" | "hang-up" | "kill";
  reason: string;
  /** Moment the module's cgroup was killed. */
  killedAt: string | null;
  /** How: `cgroup.kill`, `freeze-and-kill`, or `sigkill` (no module cgroup: the module's own pid only). Absent until killed. */
  killedBy?: ModuleKillMethod | "sigkill";
  /** When the new module said it had replayed. */
  readyAt: string | null;
}

/**
 * A daemon like the one in the field report: it runs the module in a cgroup
 * of its own, talks NDJSON with it, and on a restart drains it, waits, and
 * writes `cgroup.kill` on the module's cgroup before starting the next
 * module on the same storage (on a kernel without `cgroup.kill` it freezes
 * the cgroup and SIGKILLs each pid in it instead, as daemons did before 5.14). Scenarios get one through `ctx.daemon()`;
 * on its own it needs a writable cgroup v2 parent (root, or a delegated one).
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { DaemonSimulator } from "outlive/harness";
 * const storage = mkdtempSync("/tmp/outlive-sim-");
 * const sim = new DaemonSimulator({ storage, prefix: "simex" });
 * try {
 *   const mod = await sim.start();
 *   await mod.request("run", { spec: { id: "t", shell: "sleep 2" } });
 *   const next = await sim.restart("restart");   // drain, cgroup.kill, a new module that replays
 *   console.log(next.ready.replay);
 *   await sim.stop("disable");
 * } finally {
 *   await sim.dispose();
 *   rmSync(storage, { recursive: true, force: true });
 * }
 * ```
 */
export class DaemonSimulator {
  readonly options: SimulatorOptions;
  readonly cgroup: ModuleCgroup | null;
  module!: DaemonModule;
  readonly modules: DaemonModule[] = [];
  readonly marks: RestartMark[] = [];

  constructor(options: SimulatorOptions) {
    this.options = options.module ? { ...options, module: checkForeignModule(options.module) } : options;
    const why = ModuleCgroup.unavailable(options.moduleCgroupParent);
    this.cgroup = why
      ? null
      : ModuleCgroup.create(options.moduleCgroupName ?? `${options.prefix ?? "outlive"}-module-${process.pid}`, options.moduleCgroupParent, options.moduleKill);
  }

  async start(): Promise<DaemonModule> {
    const wrap = this.cgroup?.enterArgv();
    this.module = this.options.module
      ? await ForeignModule.start(this.options.module, wrap)
      : await ModuleProcess.start({ ...this.options, wrap });
    this.modules.push(this.module);
    return this.module;
  }

  /**
   * Drain with a reason (the module ends or keeps its tasks by it), wait for
   * the module to exit, then kill its cgroup as the field's daemon does, and
   * start the next module, which replays.
   */
  async restart(reason: "restart" | "reload" = "restart"): Promise<DaemonModule> {
    const mark: RestartMark = { at: new Date().toISOString(), kind: "restart", reason, killedAt: null, readyAt: null };
    this.marks.push(mark);
    await this.module.drain(reason, this.options.drainWaitMs ?? 5000).catch(() => this.module.child.kill("SIGTERM"));
    await this.killModuleCgroup(mark);
    await this.start();
    mark.readyAt = new Date().toISOString();
    return this.module;
  }

  /** The module's cgroup is killed with no drain notice (a crash of the daemon's kind). */
  async crash(): Promise<DaemonModule> {
    const mark: RestartMark = { at: new Date().toISOString(), kind: "crash", reason: "cgroup.kill without notice", killedAt: null, readyAt: null };
    this.marks.push(mark);
    await this.killModuleCgroup(mark);
    await this.start();
    mark.readyAt = new Date().toISOString();
    return this.module;
  }

  /** The module's cgroup is killed with no notice and no module follows (until `start()` is called again). */
  async killModule(reason = "cgroup.kill, no restart"): Promise<void> {
    const mark: RestartMark = { at: new Date().toISOString(), kind: "kill", reason, killedAt: null, readyAt: null };
    this.marks.push(mark);
    await this.killModuleCgroup(mark);
  }

  /** The daemon goes away without a drain notice: the module sees EOF on stdin (and ends every task). */
  async hangUp(timeoutMs = 30_000): Promise<void> {
    this.marks.push({ at: new Date().toISOString(), kind: "hang-up", reason: "stdin closed, no drain notice", killedAt: null, readyAt: null });
    this.module.child.stdin!.end();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.module.child.kill("SIGKILL");
        resolve();
      }, timeoutMs);
    });
    await Promise.race([this.module.exited, late]);
    clearTimeout(timer);
  }

  /** Stops for good: `disable` ends every task. */
  async stop(reason: "disable" | "shutdown" = "disable"): Promise<void> {
    this.marks.push({ at: new Date().toISOString(), kind: "stop", reason, killedAt: null, readyAt: null });
    await this.module.drain(reason, this.options.stopWaitMs ?? 30_000).catch(() => this.module.child.kill("SIGKILL"));
  }

  /** Ends the module (if still running) and removes its cgroup. Tasks outside it are not touched. */
  async dispose(): Promise<void> {
    for (const m of this.modules) m.child.kill("SIGKILL");
    await this.cgroup?.remove();
  }

  private async killModuleCgroup(mark: RestartMark): Promise<void> {
    mark.killedAt = new Date().toISOString();
    if (this.cgroup) mark.killedBy = (await this.cgroup.kill()).method;
    else {
      mark.killedBy = "sigkill";
      this.module.child.kill("SIGKILL");
    }
    await this.module.exited;
  }
}
