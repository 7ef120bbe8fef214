/**
 * The durable promises a power cut must not break, as a pure check of what
 * the disk holds after a boot against what the soak was told before the cut
 * (its ledger). No I/O here: soak-power.ts reads the disk and keeps the
 * ledger; this says which promises broke.
 */

/** What the soak knows of one task, by what outlive answered it. */
export interface TaskLedger {
  /** `asked`: run was sent and had not answered at the cut; `returned`: run returned the task. */
  run: "asked" | "returned";
  /** The end delivered as a completion (then it was on disk, by the contract): state, exit code, finishedAt. */
  end?: EndSeen;
  /** `asked`: ack sent, no answer before the cut (it may or may not have landed); `returned`: ack returned. */
  ack?: "asked" | "returned";
  /** Prune was asked while this task could be removed: it may be gone. */
  prunable?: boolean;
  /** The key it ran under, and the generation run gave it. */
  key?: string;
  generation?: number | null;
}

export interface EndSeen {
  state: string;
  exitCode: number | null;
  finishedAt: string | null;
}

/** A record as found on disk after the boot: parsed, or not parseable (half-written). */
export type FoundRecord =
  | { ok: true; state: string; exitCode: number | null; finishedAt: string | null; acknowledgedAt: string | null; reason: string | null }
  | { ok: false; error: string };

/** One promise broken, by the name of the promise. */
export interface Broken {
  promise: "never-unknown" | "end-kept" | "ack-kept" | "ack-not-invented" | "whole-record" | "no-quarantine" | "no-stranger" | "floor-kept";
  id: string;
  detail: string;
}

/**
 * Checks the records found after a boot against the ledger: a task whose
 * run returned has a record and a known fate (a `lost` one names the
 * reboot); a delivered end is still that end; a returned ack is still there
 * and no ack appears that was never asked; every record parses; nothing is
 * quarantined; no record of a task the soak never asked for; the generation
 * floor did not go down. Tasks that a prune may have removed are only
 * checked when they are still there.
 *
 * @example
 * ```ts
 * import { brokenPromises } from "./promises.ts";
 * const broken = brokenPromises(
 *   { a: { run: "returned", ack: "returned", end: { state: "exited", exitCode: 0, finishedAt: "t" } } },
 *   new Map([["a", { ok: true, state: "exited", exitCode: 0, finishedAt: "t", acknowledgedAt: null, reason: null }]]),
 *   [], { before: 0, now: 0 },
 * );
 * console.log(broken.map((b) => b.promise)); // ["ack-kept"]
 * ```
 */
export function brokenPromises(
  ledger: Readonly<Record<string, TaskLedger>>,
  found: ReadonlyMap<string, FoundRecord>,
  quarantined: readonly string[],
  floor: { before: number; now: number },
): Broken[] {
  const broken: Broken[] = [];
  for (const name of quarantined) broken.push({ promise: "no-quarantine", id: name, detail: "quarantined" });
  if (floor.now < floor.before) broken.push({ promise: "floor-kept", id: "generation-floor", detail: `went from ${floor.before} to ${floor.now}` });
  for (const [id, rec] of found) {
    if (!rec.ok) {
      broken.push({ promise: "whole-record", id, detail: rec.error });
      continue;
    }
    const t = ledger[id];
    if (!t) {
      broken.push({ promise: "no-stranger", id, detail: `a record (${rec.state}) of a task the soak never started` });
      continue;
    }
    if (rec.acknowledgedAt !== null && t.ack === undefined) broken.push({ promise: "ack-not-invented", id, detail: `acknowledgedAt ${rec.acknowledgedAt}, never asked` });
  }
  for (const [id, t] of Object.entries(ledger)) {
    const rec = found.get(id);
    if (rec !== undefined && !rec.ok) continue;
    if (rec === undefined) {
      if (t.prunable) continue;
      if (t.end) broken.push({ promise: "end-kept", id, detail: `its end (${describeEnd(t.end)}) was delivered, and its record is gone` });
      else if (t.run === "returned") broken.push({ promise: "never-unknown", id, detail: "run returned, and its record is gone" });
      continue;
    }
    if (t.run === "returned" && rec.state === "lost" && !/reboot/i.test(rec.reason ?? "")) {
      broken.push({ promise: "never-unknown", id, detail: `lost, and the reason does not name the reboot: ${rec.reason}` });
    }
    if (t.end && (rec.state !== t.end.state || rec.exitCode !== t.end.exitCode || rec.finishedAt !== t.end.finishedAt)) {
      broken.push({ promise: "end-kept", id, detail: `delivered ${describeEnd(t.end)}, now ${describeEnd(rec)}` });
    }
    if (t.ack === "returned" && rec.acknowledgedAt === null) broken.push({ promise: "ack-kept", id, detail: `ack returned, and the record (${rec.state}) has no acknowledgedAt` });
  }
  return broken;
}

function describeEnd(e: { state: string; exitCode: number | null; finishedAt: string | null }): string {
  return `${e.state}${e.exitCode === null ? "" : ` ${e.exitCode}`} at ${e.finishedAt}`;
}
