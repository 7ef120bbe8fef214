import { ForeignModule } from "./daemon/foreign-module.ts";
import { type DaemonModule, DaemonSimulator, type SimulatorOptions } from "./daemon/simulator.ts";
import type { Incarnation, Mark } from "../shared/report.ts";

// deno-lint-ignore no-explicit-any
type Message = Record<string, any>;

export interface ScenarioDaemonOptions extends SimulatorOptions {
  /** A name for reports and timelines. */
  name: string;
  /** Acknowledge each completion as it arrives, as a daemon that delivered it would. Default true. */
  autoAck?: boolean;
}

/**
 * A daemon simulator that also keeps the timeline: every module it starts
 * (an incarnation band), every restart and kill (marks), every completion
 * it received (for "delivered exactly once"). Made by `ctx.daemon()`.
 *
 * @example
 * ```ts
 * import { defineScenario } from "outlive/harness";
 * export default defineScenario({
 *   name: "crash-then-adopt",
 *   summary: "a task survives a crash of the module and is adopted",
 *   async inside(ctx) {
 *     const d = ctx.daemon({ graceMs: 1000 });
 *     await d.start();
 *     await d.run({ id: "long", shell: "sleep 5" });
 *     const next = await d.crash();
 *     ctx.check("adopted by the next module", next.ready.replay?.adopted?.includes("long") ?? false, next.ready.replay);
 *     await d.stop("disable");
 *   },
 * });
 * ```
 */
export class ScenarioDaemon {
  readonly name: string;
  readonly sim: DaemonSimulator;
  private readonly autoAck: boolean;
  private readonly ends = new Map<DaemonModule, string>();

  constructor(options: ScenarioDaemonOptions, private readonly addMark: (m: Mark) => void) {
    this.name = options.name;
    this.autoAck = options.autoAck ?? true;
    this.sim = new DaemonSimulator(options);
  }

  get storage(): string {
    return this.sim.options.storage;
  }

  get module(): DaemonModule {
    return this.sim.module;
  }

  get modules(): DaemonModule[] {
    return this.sim.modules;
  }

  /** The current module as a foreign one (`ctx.daemon({ module })`): its stdin, stdout lines, waits. */
  get foreign(): ForeignModule {
    if (!(this.module instanceof ForeignModule)) throw new Error(`${this.name} runs outlive's module, not a foreign one: use request()`);
    return this.module;
  }

  async start(): Promise<DaemonModule> {
    return this.watch(await this.sim.start());
  }

  /** Drain `restart`, wait, cgroup.kill, start the next module (which replays). */
  async restart(reason: "restart" | "reload" = "restart"): Promise<DaemonModule> {
    this.ends.set(this.module, `drained (${reason}), then its cgroup killed`);
    const mod = await this.sim.restart(reason);
    this.markLast();
    return this.watch(mod);
  }

  /** cgroup.kill with no notice, then a new module. */
  async crash(): Promise<DaemonModule> {
    this.ends.set(this.module, "cgroup killed without notice");
    const mod = await this.sim.crash();
    this.markLast();
    return this.watch(mod);
  }

  /** cgroup.kill with no notice, and no module after it. */
  async killModule(reason?: string): Promise<void> {
    this.ends.set(this.module, "cgroup killed, no restart");
    await this.sim.killModule(reason);
    this.markLast();
  }

  /** The daemon closes the connection without a drain notice. */
  async hangUp(): Promise<void> {
    this.ends.set(this.module, "stdin closed without a drain notice");
    await this.sim.hangUp();
    this.markLast();
  }

  /** Drain `disable` (or `shutdown`): the module ends every task and exits. */
  async stop(reason: "disable" | "shutdown" = "disable"): Promise<void> {
    this.ends.set(this.module, `drained (${reason})`);
    await this.sim.stop(reason);
    this.markLast();
  }

  /** Drain with a reason and wait for the module to exit, with no new module (a stop that keeps tasks). */
  async drainOnly(reason: "restart" | "reload"): Promise<void> {
    this.ends.set(this.module, `drained (${reason}), not restarted`);
    this.addMark({ at: new Date().toISOString(), kind: "drain", label: `${this.name}: drain ${reason}` });
    await this.module.drain(reason);
  }

  /** `run` on the current module; resolves with the task record. */
  async run(spec: Message): Promise<Message> {
    return (await this.module.request("run", { spec })).task;
  }

  async request(op: string, body: Message = {}): Promise<Message> {
    return this.module.request(op, body);
  }

  /** Every completion event any incarnation delivered, in order. */
  deliveries(): Message[] {
    return this.modules.flatMap((m) => m.completions());
  }

  incarnations(runtime: string): Incarnation[] {
    return this.modules.map((m) => ({
      daemon: this.name,
      pid: m.pid,
      runtime,
      placement: m.ready?.placement ?? "?",
      startedAt: m.spawnedAt,
      endedAt: m.exitedAt,
      end: m.exitedAt ? (this.ends.get(m) ?? "exited") : null,
    }));
  }

  /** Ends every module still running and removes the module cgroup. */
  async dispose(): Promise<void> {
    await this.sim.dispose();
  }

  private watch(mod: DaemonModule): DaemonModule {
    if (this.autoAck) {
      const ack = (m: Message) => {
        if (m.event === "completion" && mod.exitedAt === null) mod.request("ack", { id: m.task.id }, 10_000).catch(() => {});
      };
      // Completions can arrive in the same read as "ready", before this listener exists.
      for (const m of mod.events) ack(m);
      mod.onEvent(ack);
    }
    return mod;
  }

  private markLast(): void {
    const m = this.sim.marks[this.sim.marks.length - 1];
    if (!m) return;
    this.addMark({ at: m.at, kind: m.kind, label: `${this.name}: ${m.kind} (${m.reason})` });
    if (m.killedAt) this.addMark({ at: m.killedAt, kind: "cgroup.kill", label: `${this.name}: ${m.killedBy ?? "cgroup.kill"} on the module cgroup` });
    if (m.readyAt) this.addMark({ at: m.readyAt, kind: "ready", label: `${this.name}: new module replayed` });
  }
}
