import { writeFileSync } from "node:fs";
import { basename } from "node:path";

/**
 * The durable writes a power-cut test can stop at, by kind: a task's first
 * record (`start`, before its spawn), a task's end
 * (its terminal record's rename), an ack (the rename of the record that
 * carries `acknowledgedAt`), the generation floor's rename, a retention
 * rename (a task's directory moved into `removing/`), a quarantine (a
 * directory moved into `quarantine/`).
 */
export type DurableWriteKind = "start" | "end" | "ack" | "floor" | "retention" | "quarantine";

export const DURABLE_WRITE_KINDS: readonly DurableWriteKind[] = ["start", "end", "ack", "floor", "retention", "quarantine"];

/**
 * The debug seam's variable: `KIND:K:FILE`. Not part of any API and read by
 * nothing else: the power-cut soak (harness/cases/soak-power.ts) sets it in
 * the environment of the module it starts, in a machine it is about to cut.
 */
export const CUT_SEAM_ENV = "OUTLIVE_DEBUG_CUT_AT";

interface CutSpec {
  kind: DurableWriteKind;
  k: number;
  file: string;
}

/** Read once: off (null) unless the variable is set and well formed. */
const spec: CutSpec | null = parseCutSpec(process.env[CUT_SEAM_ENV]);
let seen = 0;

/** `KIND:K:FILE` → its parts; null when absent or malformed (a malformed one is ignored, never half-used). */
export function parseCutSpec(value: string | undefined): CutSpec | null {
  if (!value) return null;
  const m = /^([a-z]+):([1-9][0-9]*):(\/.+)$/.exec(value);
  if (!m || !(DURABLE_WRITE_KINDS as readonly string[]).includes(m[1])) return null;
  return { kind: m[1] as DurableWriteKind, k: Number(m[2]), file: m[3] };
}

/**
 * Called right after the rename of a durable write, before the flush of its
 * directory. Off (one comparison) unless `OUTLIVE_DEBUG_CUT_AT` is set; then
 * at the K-th write of KIND this process makes, it writes FILE (the power-cut
 * test's host sees it and resets the machine) and blocks this thread, so
 * nothing after the rename (the directory's flush, the reply to the caller)
 * happens before the power goes.
 */
export function durableWriteRenamed(kind: DurableWriteKind | null): void {
  if (spec === null || kind !== spec.kind) return;
  if (++seen !== spec.k) return;
  writeFileSync(spec.file, `${kind} ${seen} pid ${process.pid} at ${new Date().toISOString()}\n`);
  // Synchronous on purpose: an await would let the event loop run the flush and the reply before the cut.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 600_000);
}

/**
 * The kind of a durable write through writeFileAtomic, told from its path and
 * content: only the seam asks, and only when it is on.
 */
export function durableWriteKindOf(path: string, data: string): DurableWriteKind | null {
  if (spec === null) return null;
  const name = basename(path);
  if (name === "generation-floor") return "floor";
  if (name !== "record.json") return null;
  if (/"acknowledgedAt":\s*"/.test(data)) return "ack";
  return /"state":\s*"starting"/.test(data) ? "start" : "end";
}
