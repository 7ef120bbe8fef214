import type { FinishedAtSource, TaskRecord } from "../store/record/record.ts";
import type { ReplayEvidence } from "./replay-evidence.ts";

/** When a task ended, and what says so. */
export interface EndTime {
  finishedAt: string;
  finishedAtSource: FinishedAtSource;
  /** For an end only noticed later: the last moment it was known alive (A); it ended between this and `finishedAt` (B). */
  endedAfter: string | null;
}

/**
 * Dates an end from the best evidence at hand: the wrapper's end marks (the
 * time of `io/ended`, made as its command ended, else of the exit code it
 * wrote just after), else the watchdog's timed-out marker,
 * else the moment a live watch saw the task's cgroup empty, else the first
 * moment it was seen gone, with the last moment it was known alive (seen
 * alive, started, or writing output) as `endedAfter`; for a task of an
 * earlier boot, the moment this boot began is when it was known gone. Pure.
 *
 * @example
 * ```ts
 * import { endTime } from "./end-time.ts";
 * const record = { startedAt: "2026-12-01T10:00:00.000Z" } as never;
 * const ev = { marker: { kind: "empty" }, timedOutAt: null, lastOutputAt: "2026-12-01T10:00:05.000Z",
 *   lookedAt: "2026-12-01T10:01:00.000Z" } as never;
 * console.log(endTime(record, ev));
 * // { finishedAt: "2026-12-01T10:01:00.000Z", finishedAtSource: "seen-gone", endedAfter: "2026-12-01T10:00:05.000Z" }
 * ```
 */
export function endTime(record: TaskRecord, ev: ReplayEvidence): EndTime {
  if (ev.marker.kind === "code") {
    // The wrapper marks its command's end before it waits for its watchdog; the code comes after that wait.
    const ended = ev.commandEndedAt && ev.commandEndedAt <= ev.marker.writtenAt ? ev.commandEndedAt : ev.marker.writtenAt;
    return { finishedAt: ended, finishedAtSource: "exit-marker", endedAfter: null };
  }
  if (ev.timedOutAt) return { finishedAt: ev.timedOutAt, finishedAtSource: "timed-out-marker", endedAfter: null };
  if (ev.emptiedAt) return { finishedAt: ev.emptiedAt, finishedAtSource: "cgroup-emptied", endedAfter: null };
  // Without a lookedAt (evidence made by hand) the moment of deciding is the first moment it is known gone.
  let seenGone = ev.seenGoneAt ?? ev.lookedAt ?? new Date().toISOString();
  // Recorded under another boot: it was gone by the time this boot began.
  if (ev.bootIdNow !== record.bootId && ev.bootedAt && ev.bootedAt < seenGone) seenGone = ev.bootedAt;
  const alive = [ev.seenAliveAt, record.startedAt, ev.lastOutputAt]
    .filter((t): t is string => typeof t === "string" && t <= seenGone)
    .sort()
    .at(-1) ?? null;
  return { finishedAt: seenGone, finishedAtSource: "seen-gone", endedAfter: alive };
}
