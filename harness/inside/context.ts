import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { release } from "node:os";
import { join } from "node:path";
import { $ } from "zx";
import { cgroupProcs, findCgroup2Mount, readCgroup, type TaskRecord, TaskStore, taskPaths } from "../../lib/internal.ts";
import type { SimulatorOptions } from "./daemon/simulator.ts";
import type { DelegatedCgroup } from "./delegated-cgroup.ts";
import type { Scenario as ScenarioOf } from "../shared/define.ts";
import { ScenarioSkip } from "../shared/skip.ts";
import { timeScaleOf } from "../shared/time-scale.ts";
import type { Check, Incarnation, Mark } from "../shared/report.ts";
import { ScenarioDaemon } from "./scenario-daemon.ts";
import { DEFAULT_READY_TIMEOUT_MS } from "./module/module-client.ts";
import { cgroupKillRefusal } from "../../lib/placement/cgroup-v2/cgroup-v2.ts";

// deno-lint-ignore no-explicit-any
type Message = Record<string, any>;

export interface ContextSetup {
  scenario: ScenarioOf<ScenarioContext>;
  /** The scenario's directory inside the container (shared with the host): storages live here. */
  runDir: string;
  /** Unit and cgroup prefix, unique to the scenario, so cleanup never touches another's. */
  prefix: string;
  cgroup: DelegatedCgroup;
  /** systemd version inside, for scenarios whose expectation depends on it. */
  systemd: number;
  /** What the host side passed (`RunInOptions.params`). Default none. */
  params?: Record<string, string>;
  /**
   * The driver's half of `ctx.reboot()`: writes what the steps found so far
   * where the host reads it, then asks the host to reboot the machine. The
   * steps after a reboot have it too: a scenario may reboot again and again
   * (the power-cut soak does), each time going on in `reboot.after`.
   */
  requestReboot?: () => Promise<void>;
  /** The machine was rebooted under this scenario: the steps running are its `reboot.after`. */
  afterReboot?: boolean;
}

/** Defaults every daemon of a scenario gets unless it says otherwise. */
const DAEMON_DEFAULTS = {
  /** Adopted tasks' ends are seen within a fifth of a second. */
  livenessMs: 200,
  /** Short enough for scenarios, long enough for a TERM trap to run. */
  graceMs: 1500,
  drainWaitMs: 10_000,
};

/**
 * What a scenario's steps get inside the container: daemons that keep the
 * timeline, checks, skips, marks and bounded waits. Everything it starts is
 * ended by `cleanup()`.
 *
 * @example
 * ```ts
 * import { defineScenario, type ScenarioContext } from "outlive/harness";
 * async function steps(ctx: ScenarioContext): Promise<void> {
 *   const d = ctx.daemon();
 *   await d.start();
 *   const t = await d.run({ id: "t", shell: "echo hi; sleep 1" });
 *   await ctx.waitFor("its output", () => ctx.output(t.id).includes("hi"), 5000);
 *   ctx.mark("note", "output seen");
 *   const pid = (await ctx.record(t.id))?.pid ?? 0;
 *   ctx.check("it runs in its own scope", /task-t\.scope$/.test(ctx.cgroupOf(pid) ?? ""), ctx.cgroupOf(pid));
 *   ctx.check("the scope is loaded", (await ctx.units()).length === 1, await ctx.units());
 *   await d.stop("disable");
 * }
 * export default defineScenario({ name: "ctx-tour", summary: "what ctx offers", inside: steps });
 * ```
 */
export class ScenarioContext {
  readonly scenario: ScenarioOf<ScenarioContext>;
  readonly runDir: string;
  readonly prefix: string;
  readonly cgroup: DelegatedCgroup;
  readonly systemd: number;
  /** Values the host side passed to this run (`RunInOptions.params`), by key; empty when none. */
  readonly params: Readonly<Record<string, string>>;
  /** The default storage (each daemon may take another: `storageFor`). */
  readonly storage: string;
  readonly checks: Check[] = [];
  readonly marks: Mark[] = [];
  readonly facts: Record<string, unknown> = {};
  readonly daemons: ScenarioDaemon[] = [];
  /** Module processes started by something other than `ctx.daemon()` (a soak's own simulator), for the timeline. */
  readonly incarnations: Incarnation[] = [];
  /**
   * Completions those other modules delivered, one entry per delivery (a
   * redelivery again): the report's per-task `completionsDelivered` counts
   * them beside the scenario daemons' own.
   */
  readonly deliveries: Array<{ storage: string; id: string }> = [];
  readonly storages = new Set<string>();

  /** True in `reboot.after`: the machine has rebooted since the scenario began. */
  readonly afterReboot: boolean;
  private readonly requestReboot: (() => Promise<void>) | null;

  constructor(setup: ContextSetup) {
    this.afterReboot = setup.afterReboot ?? false;
    this.requestReboot = setup.requestReboot ?? null;
    this.scenario = setup.scenario;
    this.runDir = setup.runDir;
    this.prefix = setup.prefix;
    this.cgroup = setup.cgroup;
    this.systemd = setup.systemd;
    this.params = setup.params ?? {};
    this.storage = this.storageFor("main");
  }

  /** A fresh storage directory under the run dir. */
  storageFor(label: string): string {
    const dir = join(this.runDir, `storage-${label}`);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.storages.add(dir);
    return dir;
  }

  /**
   * A daemon simulator whose module cgroups live in the driver's delegated cgroup. Call `.start()` on it.
   * Its modules get 20 s times the run's time scale to say "ready" unless `readyTimeoutMs` is given.
   */
  daemon(options: Partial<SimulatorOptions> & { name?: string; autoAck?: boolean } = {}): ScenarioDaemon {
    if (options.placement === "cgroup-v2") {
      // Asked of the kernel, not of the suite's name: the driver's delegated cgroup is a non-root one, which has cgroup.kill wherever the kernel does.
      const refused = cgroupKillRefusal({ dir: this.cgroup.dir, hasKill: existsSync(join(this.cgroup.dir, "cgroup.kill")) }, release());
      if (refused) this.skip(`this scenario asks for the cgroup-v2 placement, which is refused here: ${refused}`);
    }
    const n = this.daemons.length + 1;
    const name = options.name ?? `daemon-${n}`;
    const d = new ScenarioDaemon(
      {
        ...DAEMON_DEFAULTS,
        // Module-client's bound, times the run's scale: unscaled, it failed `memory-cap` on a vm under TCG with three
        // guests on two cores (a module start beyond 20 s), where every other wait in the scenario was scaled.
        readyTimeoutMs: DEFAULT_READY_TIMEOUT_MS * timeScaleOf(this.params),
        storage: this.storage,
        prefix: this.prefix,
        runtime: this.scenario.runtime ?? "node",
        ...options,
        name,
        moduleCgroupParent: this.cgroup.dir,
        moduleCgroupName: `module-${n}`,
      },
      (m) => this.marks.push(m),
    );
    if (options.storage) this.storages.add(options.storage);
    this.daemons.push(d);
    return d;
  }

  /**
   * Ends this boot of the machine the way the scenario's `reboot.how` says,
   * now: the host sees the request within a tenth of a second and cuts the
   * power or reboots; nothing after this call runs. The scenario goes on in
   * `reboot.after`, in a new driver, with the checks, marks and facts made
   * so far; `reboot.after` may call it again. `label` names the moment on
   * the timeline.
   */
  async reboot(label?: string): Promise<never> {
    if (!this.scenario.reboot || !this.requestReboot) {
      throw new Error(this.scenario.reboot ? "ctx.reboot(): this driver cannot ask the host for a reboot" : "ctx.reboot(): the scenario declares no `reboot`");
    }
    this.mark("reboot", label ?? `reboot (${this.scenario.reboot.how}) requested`);
    await this.requestReboot();
    return await new Promise<never>(() => {});
  }

  check(name: string, ok: boolean, detail?: unknown): boolean {
    this.checks.push({ name, ok, detail });
    this.log(`${ok ? "ok  " : "FAIL"} ${name}${ok || detail === undefined ? "" : `: ${JSON.stringify(detail)}`}`);
    return ok;
  }

  /** Ends the scenario as skipped: it cannot say anything here, for this reason. */
  skip(reason: string): never {
    throw new ScenarioSkip(reason);
  }

  mark(kind: string, label: string): void {
    this.marks.push({ at: new Date().toISOString(), kind, label });
  }

  fact(key: string, value: unknown): void {
    this.facts[key] = value;
  }

  log(line: string): void {
    process.stderr.write(`[${new Date().toISOString().slice(11, 23)}] ${this.scenario.name}: ${line}\n`);
  }

  sleep(ms: number): Promise<void> {
    return new Promise((r) => setTimeout(r, ms));
  }

  /** Polls `probe` until it returns something other than undefined/false; throws after the bound. */
  async waitFor<T>(what: string, probe: () => T | Promise<T>, timeoutMs = 15_000, intervalMs = 100): Promise<Exclude<T, false | undefined>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await probe();
      if (v !== undefined && v !== false) return v as Exclude<T, false | undefined>;
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await this.sleep(intervalMs);
    }
  }

  /** The first completion of task `id` a module of `daemon` delivered (waits, bounded). */
  completion(daemon: ScenarioDaemon, id: string, timeoutMs = 20_000): Promise<Message> {
    return this.waitFor(`the completion of ${id}`, () => daemon.deliveries().find((t) => t.id === id), timeoutMs);
  }

  /** A task's output file as text ("" when there is none). */
  output(id: string, stream: "stdout" | "stderr" = "stdout", storage = this.storage): string {
    try {
      return readFileSync(taskPaths(storage, id)[stream], "utf8");
    } catch {
      return "";
    }
  }

  /** A task's record as stored now (no supervisor involved), or null when it cannot be read. */
  async record(id: string, storage = this.storage): Promise<TaskRecord | null> {
    // Read-only: a scenario's storage may be full or read-only on purpose.
    const r = await (await TaskStore.open(storage, { readOnly: true })).read(id);
    return r.ok ? r.record : null;
  }

  /** zx's `$`, inside the container as the user: `await ctx.$\`my-tool status\``. */
  readonly $ = $;

  /** The cgroup v2 directory of a process (under the mount), or null when it is gone. */
  cgroupOf(pid: number): string | null {
    const path = readCgroup(pid);
    const mount = findCgroup2Mount();
    return path === null || !mount ? null : join(mount, path);
  }

  /** Pids in a cgroup directory (none when it is gone). */
  processesIn(cgroupDir: string): number[] {
    try {
      return cgroupProcs(cgroupDir);
    } catch {
      return [];
    }
  }

  /** True while a process exists (a zombie counts as gone). */
  alive(pid: number): boolean {
    try {
      return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
    } catch {
      return false;
    }
  }

  /** `systemctl --user` with zx; never throws, returns stdout. */
  async systemctl(...args: string[]): Promise<string> {
    const r = await $({ nothrow: true, quiet: true, timeout: "10s" })`systemctl --user ${args}`;
    return r.stdout;
  }

  /** Units of this scenario's prefix that the user manager has loaded (scopes, the slice). */
  async units(pattern = `${this.prefix}-task-*.scope`): Promise<string[]> {
    const out = await this.systemctl("list-units", "--all", "--plain", "--no-legend", "--no-pager", pattern);
    return out.split("\n").map((l) => l.trim().split(/\s+/)[0]).filter((u): u is string => Boolean(u));
  }

  /** Ends every module, every unit of the prefix, every stray cgroup; returns what was still there. */
  async cleanup(): Promise<string[]> {
    for (const d of this.daemons) await d.dispose().catch(() => {});
    // The slice itself stays loaded (inactive) after its scopes are gone; only scopes count as left behind.
    const left = await this.units(`${this.prefix}-*`);
    await this.systemctl("stop", `${this.prefix}.slice`, ...left);
    await this.systemctl("reset-failed", `${this.prefix}*`);
    return [...left, ...this.cgroup.removeStrays()];
  }
}
