import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { type TaskRecord, isRunning, isTerminal, readProcStat } from "../../../lib/internal.ts";
import { DaemonSimulator } from "../daemon/simulator.ts";
import type { DaemonModule, RestartMark } from "../daemon/simulator.ts";
import { checkCompletions, checkOutcomes, type TaskTruth, type Violation } from "./invariants.ts";
import { makeTask, prng } from "./task-mix.ts";

export interface SoakOptions {
  storage: string;
  /** Default `auto` (daemon mode picks the best placement here). */
  placement?: string;
  prefix?: string;
  /** How many times the module is restarted (or crashed). Default 20. */
  restarts?: number;
  /** Tasks kept in flight: between these two. Default [10, 50]. */
  inFlight?: [number, number];
  seed?: number;
  runtime?: "node" | "deno";
  /** Kill ladder grace inside the module. Default 500 ms. */
  graceMs?: number;
  moduleCgroupParent?: string;
  log?: (line: string) => void;
}

export type FaultKind = "restart" | "crash" | "kill-during-replay" | "sigkill-module";

export interface SoakReport {
  seed: number;
  placement: string;
  restartsSurvived: number;
  faults: Record<FaultKind, number>;
  tasksRun: number;
  outcomes: Record<string, number>;
  outcomesByKind: Record<string, Record<string, number>>;
  /**
   * The `lost` ends, by whether the module had answered the task's `run`
   * before a fault: a task whose `run` returned must never be lost to a
   * restart; one whose `run` was cut short may be (its spawn did not complete).
   */
  lost: { runReturned: number; runCutShort: number };
  /** Every `lost` end's reason, with how many tasks ended with it: what the closing figures are made of. */
  lostReasons: Record<string, number>;
  completionsDelivered: number;
  /** The task id of every delivery, in order (a redelivery repeats it): the per-task counts of the report come from these. */
  deliveredIds: string[];
  violations: Violation[];
  leftovers: string[];
  bystandersAlive: boolean;
  ms: number;
  /** Every module process (pid, when it ran) and every fault the daemon dealt, for the timeline. */
  modules: Array<{ pid: number; placement: string; startedAt: string; endedAt: string | null }>;
  faultMarks: RestartMark[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Restarts a module again and again under load, with the cgroup kill landing
 * at random moments (while runs, kills and replay are under way), then stops
 * it for good and checks that every task has exactly one true outcome, no
 * completion is lost or delivered twice after its acknowledgement, and
 * nothing is left behind.
 */
export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const t0 = Date.now();
  const seed = o.seed ?? Date.now() % 1_000_000;
  const random = prng(seed);
  const log = o.log ?? (() => {});
  const [minFlight, maxFlight] = o.inFlight ?? [10, 50];
  const restarts = o.restarts ?? 20;
  const prefix = o.prefix ?? "soak";
  const sim = new DaemonSimulator({
    storage: o.storage,
    placement: o.placement ?? "auto",
    prefix,
    runtime: o.runtime,
    livenessMs: 200,
    graceMs: o.graceMs ?? 500,
    moduleCgroupParent: o.moduleCgroupParent,
  });
  const truths = new Map<string, TaskTruth>();
  const deliveries: Array<{ id: string; acknowledged: boolean; record: TaskRecord }> = [];
  /**
   * Tasks whose completion was delivered (and so acknowledged at once), with the record it carried: retention
   * may remove them from the storage. Not only those whose ack was answered: a restart can cut off the answer
   * to an ack that landed (3 of 3,959 tasks in a 500-restart soak).
   */
  const acknowledged = () => new Map(deliveries.map((d) => [d.id, d.record]));
  const faults: Record<FaultKind, number> = { restart: 0, crash: 0, "kill-during-replay": 0, "sigkill-module": 0 };
  // Processes outside outlive that no task kill may ever touch.
  const bystanders: ChildProcess[] = Array.from({ length: 3 }, () => spawn("sleep", ["3600"], { stdio: "ignore", detached: true }));
  let n = 0;
  let mod: DaemonModule;
  let violations: Violation[] = [];
  let survived = 0;
  let placement = "?";

  /** Follows one module's completions and acknowledges each one. */
  const follow = (m: DaemonModule) => {
    let seen = 0;
    const timer = setInterval(() => {
      for (; seen < m.events.length; seen++) {
        const e = m.events[seen];
        if (e.event !== "completion") continue;
        const d = { id: e.task.id as string, acknowledged: false, record: e.task as TaskRecord };
        deliveries.push(d);
        m.request("ack", { id: d.id }, 10_000).then(() => (d.acknowledged = true), () => {});
      }
    }, 20);
    void m.exited.then(() => clearInterval(timer));
  };

  const live = (records: TaskRecord[]) => records.filter((r) => !isTerminal(r.state)).length;

  try {
    mod = await sim.start();
    placement = mod.ready.placement;
    follow(mod);
    log(`soak: seed ${seed}, placement ${placement}, ${restarts} restarts`);
    for (let round = 1; round <= restarts; round++) {
      const records: TaskRecord[] = (await mod.request("list").catch(() => ({ tasks: [] }))).tasks;
      const target = minFlight + Math.floor(random() * (maxFlight - minFlight + 1));
      // Runs and kills are sent and not awaited, so the fault below lands in the middle of them.
      for (let i = live(records); i < target; i++) {
        const task = makeTask(++n, random, `s${seed}`);
        const truth: TaskTruth = { task, acknowledgedRun: false, killRequested: false };
        truths.set(task.id, truth);
        mod.request("run", { spec: task.spec }, 20_000).then(() => (truth.acknowledgedRun = true), () => {});
      }
      for (const r of records.filter((r) => !isTerminal(r.state))) {
        const truth = truths.get(r.id);
        if (truth && random() < 0.15) {
          truth.killRequested = true;
          mod.request("kill", { id: r.id }, 20_000).catch(() => {});
        }
      }
      await sleep(50 + random() * 1200);
      const pick = random();
      const fault: FaultKind = pick < 0.5 ? "restart" : pick < 0.75 ? "crash" : pick < 0.9 ? "kill-during-replay" : "sigkill-module";
      faults[fault]++;
      if (fault === "restart") mod = await sim.restart("restart");
      else if (fault === "crash") mod = await sim.crash();
      else if (fault === "sigkill-module") {
        mod.child.kill("SIGKILL");
        await mod.exited;
        mod = await sim.start();
      } else {
        // The cgroup kill lands while the next module is still replaying.
        const next = sim.crash().catch(() => null);
        await sleep(20 + random() * 150);
        if (sim.cgroup) await sim.cgroup.kill();
        else sim.module.child.kill("SIGKILL");
        mod = (await next) ?? (await sim.start());
        if (mod.exitedAt !== null || mod.child.exitCode !== null || mod.child.signalCode !== null) mod = await sim.start();
      }
      follow(mod);
      survived++;
      const now: TaskRecord[] = (await mod.request("list")).tasks;
      const found = checkOutcomes(now, truths, { finalStop: false, survivingPlacement: placement !== "process-group" }, acknowledged());
      if (fault === "restart" && placement !== "process-group") {
        // A drain lets runs and kills under way finish: a restart with notice loses nothing, not even a spawn.
        const lostBefore = new Set(records.filter((r) => r.state === "lost").map((r) => r.id));
        for (const r of now) {
          if (r.state === "lost" && !lostBefore.has(r.id)) found.push({ id: r.id, rule: "a drained restart loses no task", detail: r.reason ?? "" });
        }
      }
      if (found.length) log(`soak: round ${round} (${fault}): ${found.length} violation(s): ${JSON.stringify(found.slice(0, 3))}`);
      violations.push(...found);
      log(`soak: round ${round}/${restarts} ${fault}: ${live(now)} in flight, ${now.length} tasks so far`);
    }
    // The final stop ends everything; one more module delivers what is still unacknowledged.
    await sim.stop("disable");
    mod = await sim.start();
    follow(mod);
    await sleep(500);
    const final: TaskRecord[] = (await mod.request("list")).tasks;
    await mod.drain("restart");
    violations = dedupe([
      ...violations,
      ...checkOutcomes(final, truths, { finalStop: true, survivingPlacement: placement !== "process-group" }, acknowledged()),
      ...checkCompletions(deliveries, final.filter((r) => isTerminal(r.state)).map((r) => r.id)),
    ]);
    const leftovers = findLeftovers(final);
    const outcomes: Record<string, number> = {};
    const outcomesByKind: Record<string, Record<string, number>> = {};
    // Every task's end: as stored, or as its acknowledged completion carried it when retention has removed it since.
    const stored = new Set(final.map((r) => r.id));
    const ends = [...final, ...[...acknowledged().values()].filter((r) => !stored.has(r.id))];
    const lost = { runReturned: 0, runCutShort: 0 };
    const lostReasons: Record<string, number> = {};
    for (const r of ends) {
      outcomes[r.state] = (outcomes[r.state] ?? 0) + 1;
      if (r.state === "lost") {
        lostReasons[r.reason ?? ""] = (lostReasons[r.reason ?? ""] ?? 0) + 1;
        if (truths.get(r.id)?.acknowledgedRun) lost.runReturned++;
        else lost.runCutShort++;
      }
      const kind = truths.get(r.id)?.task.kind ?? "unknown";
      outcomesByKind[kind] ??= {};
      outcomesByKind[kind][r.state] = (outcomesByKind[kind][r.state] ?? 0) + 1;
    }
    const bystandersAlive = bystanders.every((b) => isRunning(b.pid!));
    if (!bystandersAlive) violations.push({ id: "-", rule: "no unrelated process signalled", detail: "a bystander died" });
    return {
      seed,
      placement,
      restartsSurvived: survived,
      faults,
      tasksRun: ends.length,
      outcomes,
      outcomesByKind,
      lost,
      lostReasons,
      completionsDelivered: deliveries.length,
      deliveredIds: deliveries.map((d) => d.id),
      violations,
      leftovers,
      bystandersAlive,
      ms: Date.now() - t0,
      modules: sim.modules.map((m) => ({ pid: m.pid, placement: m.ready?.placement ?? "?", startedAt: m.spawnedAt, endedAt: m.exitedAt })),
      faultMarks: sim.marks,
    };
  } finally {
    for (const b of bystanders) b.kill("SIGKILL");
    await sim.dispose();
  }
}

function dedupe(vs: Violation[]): Violation[] {
  const seen = new Set<string>();
  return vs.filter((v) => {
    const k = `${v.id}|${v.rule}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Task processes still alive (same pid and start time) and task cgroups still present, after the final stop. */
function findLeftovers(records: TaskRecord[]): string[] {
  const left: string[] = [];
  for (const r of records) {
    if (r.pid === null || r.startTime === null) continue;
    const s = readProcStat(r.pid);
    if (s && s.startTime === r.startTime && s.state !== "Z") left.push(`process ${r.pid} of ${r.id}`);
    const dir = r.location.cgroupDir;
    if (dir && existsSync(dir)) left.push(`cgroup ${dir}`);
  }
  return left;
}

