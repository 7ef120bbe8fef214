import { existsSync, lstatSync, statSync } from "node:fs";
import { groupExists, waitUntil } from "../kill/process-group.ts";
import { readExitMarkerNow } from "../observe/exit-marker.ts";
import { readShimLine } from "../observe/shim-line.ts";
import type { Placement } from "../placement/placement.ts";
import type { Sightings } from "../observe/sightings.ts";
import { inspectPid, type ProcessIdentity } from "../proc/identity.ts";
import { bootedAt } from "../proc/start-time.ts";
import type { TaskRecord } from "../store/record/record.ts";
import type { TaskPaths } from "../store/layout.ts";
import { fileSystemFull } from "../store/full-disk/space.ts";
import { processesWithArg, processesWithArgWriting } from "../proc/arg-holders.ts";

/** How long replay waits for a spawn's still-living wrapper to show whether its command started. */
const STARTER_SETTLES_MS = 2_000;
import type { PidEvidence, ReplayEvidence, SpawnerCgroupEvidence } from "./replay-evidence.ts";
import { spawnerCgroupEvidence } from "./spawner-cgroup.ts";
import type { SettleAnswer } from "../spawner/protocol.ts";

/** How long replay waits for a wrapper the spawner forked to show up in its unit or cgroup. */
const PLACED_AFTER_SPAWN_MS = 10_000;

export interface EvidenceContext {
  paths: TaskPaths;
  /** The placement the task was started with (from its record), not necessarily today's choice. */
  placement: Placement;
  bootIdNow: string;
  restartedAt: string;
  /** Whether the incarnation with this id still runs; null when unknown. */
  spawnerAlive: (incarnationId: string) => Promise<boolean | null>;
  /** The other live-recorded tasks the same incarnation spawned (pid and start time), for the shared-cgroup evidence. */
  otherTasks?: (record: TaskRecord) => ProcessIdentity[];
  /**
   * Resolves once the task's wrapper, when it is the caller's own child, has
   * been reaped (bounded). Asked only once its exit code is written: the
   * group check after the reap is then one kill(2), not a read of all /proc.
   */
  reaped?: (record: TaskRecord) => Promise<void>;
  /** What this process saw of its tasks alive and gone; each look here is added to it. Without it, only this look counts. */
  sightings?: Sightings;
  /** What the storage's spawner did with the request for this task id, once no longer under way (bounded); null when none runs. */
  settleSpawn?: ((id: string) => Promise<SettleAnswer | null>) | null;
}

/** Looks at the disk, /proc and the task's cgroup for one task. The I/O half of replay. */
export async function gatherEvidence(record: TaskRecord, ctx: EvidenceContext): Promise<ReplayEvidence> {
  if (record.state === "starting" && record.pid === null) await settleStarting(record, ctx);
  // The process first, the marker after: a wrapper seen gone has written its marker already,
  // while a marker read first can be empty a moment before the wrapper writes it and exits.
  const before = Date.now();
  let pid = pidEvidence(record, ctx.placement);
  // A wrapper that another process (the spawner) reaps can be read mid-exit, its cgroup already left behind
  // (an OOM kill of the whole task, say): "same-elsewhere" is waited out (bounded) before it is believed.
  if (pid === "same-elsewhere") pid = await whileElsewhere(record, ctx.placement);
  // A record whose pid was never written is searched by id, and before its marker is read, like any process:
  // a wrapper that exits between the two then leaves its code to be read, never a spawn that seems lost.
  const found = record.state === "starting" && record.pid === null ? await ctx.placement.locate(record.id).catch(() => null) : null;
  let lookedAt = Date.now();
  const marker = readExitMarkerNow(ctx.paths.exit);
  // Seen between writing its exit code and exiting: the wrapper is about to go. Wait for that (bounded),
  // so that what the task left running is told apart from the wrapper itself.
  if (marker.kind === "code" && (pid === "same" || pid === "absent")) {
    await ctx.reaped?.(record);
    if (pid === "same") {
      pid = await untilWrapperGone(record, ctx.placement);
      lookedAt = Date.now();
    }
  }
  const seen = sighted(record, pid, before, lookedAt, ctx.sightings);
  const timedOutAt = mtime(ctx.paths.timedOut);
  const commandEndedAt = marker.kind === "code" ? fileTime(ctx.paths.ended) : null;
  const hostStopping = marker.kind === "code" && existsSync(ctx.paths.hostStopping);
  const hostUnanswered = marker.kind === "code" && !hostStopping ? readShimLine(ctx.paths.hostUnanswered) : null;
  // Only without a code: a shim that wrote its code ran the command, whatever else is in io/.
  const shimRefused = marker.kind === "code" ? null : readShimLine(ctx.paths.shimRefused);
  const output = [mtime(ctx.paths.stdout, true), mtime(ctx.paths.stderr, true)];
  let remnants = false;
  if (pid === "absent" || pid === "reused") {
    // The group id cannot be handed out again while any member of the group lives.
    const groupAlive = pid === "absent" && record.pgid !== null && groupExists(record.pgid);
    remnants = groupAlive || (await ctx.placement.isEmpty(record)) === false;
  }
  const memory = await ctx.placement.memoryEvents(record);
  const outputTimes = output.filter((t): t is string => t !== null).sort();
  // Only a record whose pid was never written needs the placement searched by id.
  // With an exit code its end is known: the code decides, not a wrapper on its way out.
  const located = marker.kind !== "code" ? found : null;
  const spawnerAlive = await ctx.spawnerAlive(record.incarnation);
  return {
    located,
    commandStarted: record.state === "starting" && !located && marker.kind !== "code" ? await commandStarted(record, ctx.paths, outputTimes.length > 0) : null,
    spawnerCgroup: sharedCgroupEvidence(record, pid, spawnerAlive, ctx),
    bootIdNow: ctx.bootIdNow,
    marker,
    timedOutAt,
    commandEndedAt,
    hostStopping,
    hostUnanswered,
    shimRefused,
    pid,
    remnants,
    oomKills: memory?.oomKill ?? null,
    oomDetail: memory?.detail ?? null,
    spawnerAlive,
    restartedAt: ctx.restartedAt,
    lastOutputAt: outputTimes.at(-1) ?? null,
    lookedAt: new Date(lookedAt).toISOString(),
    ...seen,
    bootedAt: record.bootId !== ctx.bootIdNow ? bootedAt()?.toISOString() ?? null : null,
  };
}

/**
 * Waits out a `starting` task's spawn that the storage's spawner still has
 * under way (bounded): such a spawn counts as starting, never as never
 * started. A wrapper it forked is waited for until it is in its unit or
 * cgroup (a systemd-run registers the scope before it execs the wrapper) or
 * gone, so the looks that follow see it placed, or its exit marker.
 */
async function settleStarting(record: TaskRecord, ctx: EvidenceContext): Promise<void> {
  const settled = await ctx.settleSpawn?.(record.id);
  if (settled?.state !== "spawned") return;
  const end = Date.now() + PLACED_AFTER_SPAWN_MS;
  while (Date.now() < end) {
    const forked = inspectPid(settled.pid);
    if (!forked || forked.startTime !== settled.startTime) return;
    if (await ctx.placement.locate(record.id).catch(() => null)) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Whether the command of a task whose spawn was cut short ever started. The
 * wrapper writes the command's pid (`io/command-pid`) just before it execs the
 * command, after it entered the task's cgroup; so no pid file, no output and
 * no `io/ended` mean the command never ran. null when that cannot be told: a
 * PTY task's command is started by its holder, with no such file, and on a
 * full disk the file may not have been made.
 */
async function commandStarted(record: TaskRecord, paths: TaskPaths, wroteOutput: boolean): Promise<boolean | null> {
  const told = () => wroteOutput || existsSync(paths.commandPid) || existsSync(paths.ended);
  if (told()) return true;
  if (record.pty || fileSystemFull(paths.dir)) return null;
  // Its shim or wrapper (or the systemd-run about to exec it) may still be alive, only not yet placed: its command
  // may yet run. A wrapper names the task's io files in its argv; a shim names the task's id, with the task's
  // io/stdout as its own stdout. Either writes the command's pid within a fork of its start.
  const starters = [...processesWithArg(paths.timedOut), ...processesWithArgWriting(record.id, paths.stdout)];
  if (starters.length === 0) return false;
  const alive = () => starters.some((pid) => inspectPid(pid) !== null);
  await waitUntil(() => told() || !alive(), STARTER_SETTLES_MS);
  if (told()) return true;
  return alive() ? null : false;
}

/** Adds this look to what was seen of the task, and says what was seen: the last moment alive, the first gone, the cgroup emptied. */
function sighted(record: TaskRecord, pid: PidEvidence, before: number, after: number, sightings: Sightings | undefined) {
  const gone = pid === "absent" || pid === "reused";
  if (sightings) {
    if (pid === "same") sightings.alive(record.id, before);
    else if (gone) sightings.gone(record.id, after);
  }
  const s = sightings?.of(record.id) ?? (pid === "same" ? { aliveAt: before } : gone ? { goneAt: after } : {});
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  return { seenAliveAt: iso(s.aliveAt), seenGoneAt: iso(s.goneAt), emptiedAt: iso(s.emptiedAt) };
}

/** Same process means same pid AND same start time AND in the task's cgroup. */
export function pidEvidence(record: TaskRecord, placement: Placement): PidEvidence {
  if (record.pid === null || record.startTime === null) return "absent";
  const live = inspectPid(record.pid);
  if (!live) return "absent";
  if (live.startTime !== record.startTime) return "reused";
  return placement.identify(record, live) ? "same" : "same-elsewhere";
}

/** Looked at only where it can decide anything: a task gone without a trace from its dead supervisor's cgroup. */
function sharedCgroupEvidence(record: TaskRecord, pid: PidEvidence, spawnerAlive: boolean | null, ctx: EvidenceContext): SpawnerCgroupEvidence | null {
  const shared = record.supervisorCgroup !== null && record.location.cgroup === record.supervisorCgroup;
  if (!shared || spawnerAlive !== false || pid === "same" || pid === "same-elsewhere") return null;
  const task = record.pid !== null && record.startTime !== null ? { pid: record.pid, startTime: record.startTime } : null;
  return spawnerCgroupEvidence(record.supervisorCgroup!, task, ctx.otherTasks?.(record) ?? []);
}

/** How long evidence waits for a wrapper that has written its exit code to exit. */
const WRAPPER_EXIT_WAIT_MS = 200;

async function whileElsewhere(record: TaskRecord, placement: Placement): Promise<PidEvidence> {
  let pid: PidEvidence = "same-elsewhere";
  await waitUntil(() => (pid = pidEvidence(record, placement)) !== "same-elsewhere", WRAPPER_EXIT_WAIT_MS, 2);
  return pid;
}

async function untilWrapperGone(record: TaskRecord, placement: Placement): Promise<PidEvidence> {
  let pid: PidEvidence = "same";
  await waitUntil(() => {
    pid = pidEvidence(record, placement);
    return pid !== "same" && pid !== "same-elsewhere";
  }, WRAPPER_EXIT_WAIT_MS, 2);
  return pid;
}

function mtime(path: string, nonEmptyOnly = false): string | null {
  try {
    // An absent file is the common case (no timeout marker); no exception for it.
    const info = statSync(path, { throwIfNoEntry: false });
    if (!info) return null;
    return nonEmptyOnly && info.size === 0 ? null : info.mtime.toISOString();
  } catch {
    return null;
  }
}

/** The time of a regular file, never through a symlink; null when there is none. */
function fileTime(path: string): string | null {
  try {
    const info = lstatSync(path, { throwIfNoEntry: false });
    return info?.isFile() ? info.mtime.toISOString() : null;
  } catch {
    return null;
  }
}
