/**
 * soak-power: N power cuts (qemu's `system_reset`, default 30: `--cuts N`)
 * while tasks are started, end, are killed, acknowledged, pruned and
 * replayed, on the machine's own disk with writeback held back as in
 * host-reboot, so only what outlive flushed survives a cut. By name only,
 * and only under `--engine vm`: under software emulation it takes an hour
 * and more.
 *
 * Half the cuts come at a moment drawn from the seed, while the work goes
 * on (the driver asks, the host resets within a tenth of a second). The
 * other half come at a chosen durable write: the seed picks the k-th write
 * of a kind (a task's first record, its end, an ack, the generation floor, a
 * retention rename)
 * and the module is started with the store's debug seam
 * (`OUTLIVE_DEBUG_CUT_AT`, lib/store/write/cut-seam.ts) set, which at that
 * write stops the module right after the rename, before its directory's
 * flush, and tells the driver, which asks for the cut: a cut timed from
 * outside rarely lands there. A kind that does not come within a minute
 * falls back to a cut at once (counted as not reached).
 *
 * After each boot every durable promise is checked (harness/inside/power/
 * promises.ts): a task whose run returned is never unknown; a delivered end
 * never changes or vanishes; a returned ack is never lost, and none is
 * invented; no generation goes back (a keyed run's generation always grows,
 * the floor never drops); no record half-written, none quarantined; no
 * completion delivered again after its ack returned. The seed is printed and
 * in the report (`--seed S` replays the plan of cuts and the choices, not
 * the timing); each cut is a mark on the timeline.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { isQuarantineNote, quarantineNotePath } from "../../lib/internal.ts";
import type { ScenarioContext } from "../inside/context.ts";
import { defineScenario } from "../inside/define-scenario.ts";
import { brokenPromises, type Broken, type FoundRecord, type TaskLedger } from "../inside/power/promises.ts";
import { runIfMain } from "../inside/run-if-main.ts";
import { prng } from "../inside/soak/task-mix.ts";
import { REBOOT_COUNT_PARAM } from "../shared/report.ts";
import { READY_TIMEOUT_MS } from "./host-reboot.ts";

/** The store's debug seam (lib/store/write/cut-seam.ts): `KIND:K:FILE`. */
const CUT_SEAM_ENV = "OUTLIVE_DEBUG_CUT_AT";
/** The kinds a chosen cut stops at. A quarantine is a kind of the seam too, but a sound run never makes one (any is a failure). */
const WRITE_KINDS = ["start", "end", "ack", "floor", "retention"] as const;
type WriteKind = (typeof WRITE_KINDS)[number];
const DEFAULT_CUTS = 30;
/** How long a chosen write may take to come before the cut falls back to one at once. */
const WRITE_WAIT_MS = 60_000;
/** At most this many tasks live at once: each costs a wrapper and a warden on two emulated cores. */
const MAX_LIVE = 5;

interface PlannedCut {
  by: "moment" | "write";
  /** A moment: ms after the work starts. */
  afterMs?: number;
  kind?: WriteKind;
  k?: number;
}

interface CutMade extends PlannedCut {
  n: number;
  at: string;
  /** A write cut: the write came (else the cut came at once when WRITE_WAIT_MS ran out). */
  reached?: boolean;
  /** What the seam said (kind, count, pid, time). */
  seam?: string;
}

interface PowerLedger {
  seed: number;
  cuts: number;
  plan: PlannedCut[];
  made: CutMade[];
  tasks: Record<string, TaskLedger>;
  /** Highest generation a returned run gave, per key (the counter is the storage's: one for every key). */
  keys: Record<string, number>;
  floor: number;
  started: number;
  asked: { ack: number; kill: number; prune: number; keyed: number };
  deliveries: number;
  redeliveredUnacked: number;
  broken: Broken[];
  startedAt: string;
}

/** The plan of cuts from the seed: half at moments, half at writes (kind, k), in an order the seed shuffles. */
export function planCuts(seed: number, cuts: number): PlannedCut[] {
  const random = prng(seed);
  const plan: PlannedCut[] = [];
  for (let i = 0; i < cuts; i++) {
    if (i % 2 === 0) plan.push({ by: "moment", afterMs: 2_000 + Math.floor(random() * 18_000) });
    else {
      const kind = WRITE_KINDS[Math.floor(random() * WRITE_KINDS.length)];
      plan.push({ by: "write", kind, k: 1 + Math.floor(random() * (kind === "floor" || kind === "retention" ? 2 : 3)) });
    }
  }
  for (let i = plan.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [plan[i], plan[j]] = [plan[j], plan[i]];
  }
  return plan;
}

function newLedger(ctx: ScenarioContext): PowerLedger {
  const seed = ctx.params.seed ? Number(ctx.params.seed) : Date.now() % 1_000_000;
  const cuts = ctx.params.cuts ? Number(ctx.params.cuts) : DEFAULT_CUTS;
  if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`--seed: expected a non-negative integer, got ${ctx.params.seed}`);
  if (!Number.isSafeInteger(cuts) || cuts < 1) throw new Error(`--cuts: expected a positive integer, got ${ctx.params.cuts}`);
  return {
    seed, cuts, plan: planCuts(seed, cuts), made: [], tasks: {}, keys: {}, floor: 0, started: 0,
    asked: { ack: 0, kill: 0, prune: 0, keyed: 0 }, deliveries: 0, redeliveredUnacked: 0, broken: [], startedAt: new Date().toISOString(),
  };
}

/** One boot of the machine: check what the cut left (after the first), work, and cut again (or end). */
async function boot(ctx: ScenarioContext): Promise<void> {
  const n = Number(ctx.params[REBOOT_COUNT_PARAM] ?? 0);
  const ledger = n === 0 ? newLedger(ctx) : (ctx.facts.power as PowerLedger);
  ctx.fact("power", ledger);
  if (n === 0) ctx.log(`soak-power: seed ${ledger.seed}, ${ledger.cuts} cuts`);
  const plan = n < ledger.cuts ? ledger.plan[n] : null;
  const seamFile = join(ctx.runDir, `cut-seam-${n}`);
  const env: Record<string, string> = plan?.by === "write" ? { [CUT_SEAM_ENV]: `${plan.kind}:${plan.k}:${seamFile}` } : {};
  const d = ctx.daemon({ autoAck: false, readyTimeoutMs: READY_TIMEOUT_MS, env });
  const broke = (b: Broken[], when: string) => {
    for (const x of b) {
      ledger.broken.push(x);
      ctx.check(`boot ${n}, ${when}: ${x.promise} holds for ${x.id}`, false, x.detail);
    }
  };

  // Deliveries as they come: an end seen is an end promised; one after its ack returned is a promise broken.
  let seenDeliveries = 0;
  const takeDeliveries = () => {
    const all = d.deliveries();
    for (; seenDeliveries < all.length; seenDeliveries++) {
      const task = all[seenDeliveries] as { id: string; state: string; exitCode: number | null; finishedAt: string | null };
      ledger.deliveries++;
      const t = ledger.tasks[task.id];
      if (!t) {
        broke([{ promise: "no-stranger", id: task.id, detail: `delivered (${task.state}), never started by the soak` }], "delivery");
        continue;
      }
      // A completion sent before the ack's reply (the same stream, in order) was on its way already: only one after it breaks the promise.
      const replyAt = ackReplyAt.get(task.id);
      if (t.ack === "returned" && (replyAt === undefined || seenDeliveries >= replyAt)) {
        broke([{ promise: "ack-kept", id: task.id, detail: "delivered again after its ack returned" }], "delivery");
      }
      const end = { state: task.state, exitCode: task.exitCode ?? null, finishedAt: task.finishedAt ?? null };
      if (t.end) {
        ledger.redeliveredUnacked++;
        if (t.end.state !== end.state || t.end.exitCode !== end.exitCode || t.end.finishedAt !== end.finishedAt) {
          broke([{ promise: "end-kept", id: task.id, detail: `delivered ${JSON.stringify(t.end)}, then ${JSON.stringify(end)}` }], "delivery");
        }
      } else t.end = end;
    }
  };

  // During a write cut the module is stopped at the seam, before its reply to ready if the write is in its replay.
  let cutting = false;
  const cutAt = async (made: Omit<CutMade, "n" | "at">) => {
    cutting = true;
    const cut: CutMade = { ...made, n: n + 1, at: new Date().toISOString() };
    ledger.made.push(cut);
    const what = cut.by === "moment" ? `at ${cut.afterMs} ms` : `at ${cut.kind} #${cut.k}${cut.reached ? "" : " (not reached: at once)"}`;
    return await ctx.reboot(`power cut ${cut.n}/${ledger.cuts} ${what}`);
  };
  const watchSeam = plan?.by === "write" ? pollSeam(seamFile, () => cutting) : null;
  void watchSeam?.then((said) => said !== null && cutAt({ ...plan!, reached: true, seam: said }));

  const mod = await d.start();
  if (n === 0) ctx.check("the module chose systemd-scope with the user manager", mod.ready.placement === "systemd-scope", mod.ready.reason);
  takeDeliveries();
  if (n > 0) {
    const found = readRecords(ctx.storage);
    const quarantine = join(ctx.storage, "quarantine");
    // Each entry with the reason replay gave (in its note, inside a moved directory or beside a moved file), so a
    // report says why.
    const quarantined = (existsSync(quarantine) ? readdirSync(quarantine) : []).map((name) => {
      const entry = join(quarantine, name);
      if (isQuarantineNote(name)) return name;
      try {
        return `${name} (${readFileSync(quarantineNotePath(entry, statSync(entry).isDirectory()), "utf8").trim()})`;
      } catch {
        return name;
      }
    });
    const floorNow = readFloor(ctx.storage);
    broke(brokenPromises(ledger.tasks, found, quarantined, { before: ledger.floor, now: floorNow }), "after the cut");
    ledger.floor = Math.max(ledger.floor, floorNow);
  }

  if (plan === null) {
    await ctx.sleep(3_000);
    takeDeliveries();
    await d.stop("disable");
    finish(ctx, ledger);
    return;
  }

  const random = prng(ledger.seed + 7919 * (n + 1));
  givenBeforeBoot = Math.max(0, ...Object.values(ledger.keys));
  const worker = async () => {
    while (!cutting) {
      takeDeliveries();
      await step(ctx, d, ledger, random, n, () => cutting, (b) => broke(b, "work")).catch((e) => {
        if (!cutting) ctx.log(`soak-power: a step failed: ${(e as Error).message}`);
      });
    }
  };
  void worker();
  void worker();
  if (plan.by === "moment") {
    await ctx.sleep(plan.afterMs!);
    await cutAt(plan);
  }
  await ctx.sleep(WRITE_WAIT_MS);
  if (!cutting) await cutAt({ ...plan, reached: false });
}

/**
 * Per task acknowledged in this boot: how many completions this boot's module had sent when the ack's reply came.
 * The harness reads deliveries in batches, so one sent just before the reply may be read just after it.
 */
const ackReplyAt = new Map<string, number>();

/** The highest generation any run returned before this boot. */
let givenBeforeBoot = 0;

/** Prunes under way: an ack that lands while one is may let it take that task too. */
let prunesInFlight = 0;

/** One step of the work, chosen by the seed's stream: run, kill, ack, prune, or a pause. */
async function step(
  ctx: ScenarioContext,
  d: ReturnType<ScenarioContext["daemon"]>,
  ledger: PowerLedger,
  random: () => number,
  n: number,
  stopped: () => boolean,
  broke: (b: Broken[]) => void,
): Promise<void> {
  const r = random();
  const live = Object.entries(ledger.tasks).filter(([, t]) => t.run === "returned" && !t.end);
  const unacked = Object.entries(ledger.tasks).filter(([, t]) => t.end && !t.ack);
  if (r < 0.45 && live.length < MAX_LIVE) {
    const id = `p${n}-${++ledger.started}`;
    const long = random() < 0.2;
    const key = !long && random() < 0.5 ? `k${Math.floor(random() * 3)}` : undefined;
    const code = Math.floor(random() * 6);
    const t: TaskLedger = { run: "asked", ...(key ? { key } : {}) };
    ledger.tasks[id] = t;
    if (key) ledger.asked.keyed++;
    const task = await d.run({ id, ...(key ? { key } : {}), shell: long ? "echo long; sleep 600" : `sleep 0.${Math.floor(random() * 9)}; exit ${code}` });
    if (stopped()) return;
    t.run = "returned";
    t.generation = task.generation ?? null;
    if (key && typeof task.generation === "number") {
      // One counter for the storage, every key: a generation once given is never given again, and one given
      // after a boot is above every one given before it. (Two runs under way at once may return out of order.)
      const twin = Object.entries(ledger.tasks).find(([other, o]) => other !== id && o.generation === task.generation);
      if (twin || task.generation <= givenBeforeBoot || task.generation <= ledger.floor) {
        broke([{ promise: "floor-kept", id, detail: `key ${key} got generation ${task.generation}: ${twin ? `${twin[0]} had it` : `${givenBeforeBoot} was given before this boot (floor ${ledger.floor})`}` }]);
      }
      ledger.keys[key] = Math.max(ledger.keys[key] ?? 0, task.generation);
    }
  } else if (r < 0.55 && live.length > 0) {
    const [id] = live[Math.floor(random() * live.length)];
    ledger.asked.kill++;
    await d.request("kill", { id, graceMs: 300 }).catch(() => {});
  } else if (r < 0.85 && unacked.length > 0) {
    const [id, t] = unacked[Math.floor(random() * unacked.length)];
    t.ack = "asked";
    if (prunesInFlight > 0) t.prunable = true;
    ledger.asked.ack++;
    await d.request("ack", { id });
    if (stopped()) return;
    t.ack = "returned";
    ackReplyAt.set(id, d.deliveries().length);
  } else if (r < 0.95) {
    // What a prune may take: acknowledged ends (an ack still under way may land first).
    for (const t of Object.values(ledger.tasks)) if (t.end && t.ack) t.prunable = true;
    ledger.asked.prune++;
    prunesInFlight++;
    await d.request("prune", { keep: 2 }).finally(() => prunesInFlight--);
  } else {
    await ctx.sleep(300);
  }
}

/** Resolves with what the seam wrote once its file is there; null once the cut came another way. */
async function pollSeam(file: string, stopped: () => boolean): Promise<string | null> {
  while (!stopped()) {
    // Written by the seam with a plain writeFileSync: seen made, it may still be empty for a moment.
    const said = existsSync(file) ? readFileSync(file, "utf8").trim() : "";
    if (said !== "") return said;
    await new Promise((r) => setTimeout(r, 20));
  }
  return null;
}

/** Every task's record, parsed, or the reason it does not parse (a half-written record). */
function readRecords(storage: string): Map<string, FoundRecord> {
  const found = new Map<string, FoundRecord>();
  const tasks = join(storage, "tasks");
  if (!existsSync(tasks)) return found;
  for (const entry of readdirSync(tasks, { withFileTypes: true })) {
    // The open's write probe (.write-check) and other files beside the task directories are no tasks.
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    const id = entry.name;
    const path = join(tasks, id, "record.json");
    try {
      const r = JSON.parse(readFileSync(path, "utf8"));
      found.set(id, { ok: true, state: r.state, exitCode: r.exitCode ?? null, finishedAt: r.finishedAt ?? null, acknowledgedAt: r.acknowledgedAt ?? null, reason: r.reason ?? null });
    } catch (e) {
      found.set(id, { ok: false, error: (e as Error).message });
    }
  }
  return found;
}

function readFloor(storage: string): number {
  try {
    return Number(readFileSync(join(storage, "generation-floor"), "utf8").trim()) || 0;
  } catch {
    return 0;
  }
}

function finish(ctx: ScenarioContext, ledger: PowerLedger): void {
  const byKind: Record<string, { planned: number; reached: number }> = {};
  for (const c of ledger.made) {
    const k = c.by === "moment" ? "moment" : c.kind!;
    byKind[k] ??= { planned: 0, reached: 0 };
    byKind[k].planned++;
    if (c.by === "moment" || c.reached) byKind[k].reached++;
  }
  const count = (p: Broken["promise"]) => ledger.broken.filter((b) => b.promise === p);
  const summary = {
    seed: ledger.seed, cuts: ledger.made.length, byKind, tasks: ledger.started, asked: ledger.asked,
    deliveries: ledger.deliveries, redeliveredUnacked: ledger.redeliveredUnacked, broken: ledger.broken.length,
    minutes: Math.round((Date.now() - Date.parse(ledger.startedAt)) / 6_000) / 10,
  };
  ctx.fact("powerSummary", summary);
  ctx.log(`soak-power: ${JSON.stringify(summary)}`);
  ctx.check(`${ledger.cuts} power cuts made`, ledger.made.length === ledger.cuts, ledger.made.length);
  ctx.check("no task whose run returned is unknown", count("never-unknown").length === 0, count("never-unknown"));
  ctx.check("no delivered end changed or vanished", count("end-kept").length === 0, count("end-kept"));
  ctx.check("no returned ack lost, no completion delivered again after its ack returned", count("ack-kept").length === 0, count("ack-kept"));
  ctx.check("no ack invented", count("ack-not-invented").length === 0, count("ack-not-invented"));
  ctx.check("no generation went back", count("floor-kept").length === 0, count("floor-kept"));
  ctx.check("no record half-written", count("whole-record").length === 0, count("whole-record"));
  ctx.check("nothing quarantined", count("no-quarantine").length === 0, count("no-quarantine"));
  ctx.check("no record or delivery of a task never started", count("no-stranger").length === 0, count("no-stranger"));
}

const scenario = defineScenario({
  name: "soak-power",
  summary: "power cuts at random moments and at chosen durable writes under a busy supervisor: no durable promise broken",
  timeoutMs: 300_000,
  diskStorages: { main: "256m" },
  // A boot under TCG on two cores shared with other runs took up to 6 min (2026-12-05: one gave up at the 360 s default).
  reboot: { how: "power-cut", after: boot, timeoutMs: 900_000 },
  inside: boot,
});
export default scenario;
runIfMain(import.meta.url, scenario.name);
