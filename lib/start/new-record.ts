import type { Incarnation } from "../store/storage/incarnation.ts";
import { type PlacementName, schemaVersionFor, type TaskRecord } from "../store/record/record.ts";
import { type CheckedRunSpec, taskEnv } from "./run-spec.ts";

/** What a new record takes from outside the run spec. */
export interface NewRecordContext {
  id: string;
  /** The generation the key moved to, when the task runs under a key. */
  generation: number | null;
  now: Date;
  incarnation: Incarnation;
  bootId: string;
  placement: PlacementName;
  /** The deadline of a task without a timeout (the supervisor's `ceilingSeconds`). */
  ceilingSeconds: number;
  /** The output bound of a task that names none (the supervisor's `maxOutputBytes`). */
  maxOutputBytes: number;
}

/**
 * The `starting` record of a task about to be spawned: written before the
 * process exists, so a crash from then on leaves a record replay can
 * explain. Pure.
 *
 * @example
 * ```ts
 * import { newTaskRecord } from "./new-record.ts";
 * const spec = { id: null, command: { argv: ["true"] }, cwd: "/", env: {}, timeoutSeconds: 60, memoryMaxBytes: null, key: null, pty: null, maxOutputBytes: null,
 *   ready: null, waitReady: false, ensure: false, restart: null, cpuCores: null, pidsMax: null, envFile: null, specDigest: "sha256:00" };
 * const incarnation = { id: "i-1", pid: 1, startTime: "1", cgroup: null, bootId: "b", startedAt: "2026-12-01T00:00:00.000Z" };
 * const r = newTaskRecord(spec, { id: "t-1", generation: null, now: new Date("2026-12-01T00:00:00Z"), incarnation, bootId: "b", placement: "process-group", ceilingSeconds: 86400, maxOutputBytes: 0 });
 * console.log(r.state, r.deadlineAt); // "starting" "2026-12-01T00:01:00.000Z"
 * ```
 */
export function newTaskRecord(spec: CheckedRunSpec, ctx: NewRecordContext): TaskRecord {
  const timeout = spec.timeoutSeconds;
  const deadlineSeconds = deadlineSecondsOf(spec, ctx.ceilingSeconds);
  return {
    schemaVersion: schemaVersionFor("starting"),
    id: ctx.id,
    key: spec.key,
    generation: ctx.generation,
    command: spec.command,
    cwd: spec.cwd,
    state: "starting",
    exitCode: null,
    reason: null,
    createdAt: ctx.now.toISOString(),
    startedAt: null,
    finishedAt: null,
    lastOutputAt: null,
    outputTail: null,
    timeoutSeconds: timeout,
    deadlineAt: new Date(ctx.now.getTime() + deadlineSeconds * 1000).toISOString(),
    deadlineIsTimeout: timeout !== null,
    memoryMaxBytes: spec.memoryMaxBytes,
    pid: null,
    pgid: null,
    startTime: null,
    bootId: ctx.bootId,
    incarnation: ctx.incarnation.id,
    supervisorCgroup: ctx.incarnation.cgroup,
    placement: ctx.placement,
    location: {},
    killStartedAt: null,
    killReason: null,
    killState: null,
    acknowledgedAt: null,
    pty: spec.pty,
    maxOutputBytes: spec.maxOutputBytes ?? ctx.maxOutputBytes,
    // Names only: a value may be a secret, and the record is read by anyone who may read the storage.
    envNames: Object.keys(taskEnv(spec)).sort(),
    ...(spec.origin ? { origin: spec.origin } : {}),
    ...(spec.keepAfterEndMs === undefined ? {} : { keepAfterEndMs: spec.keepAfterEndMs }),
    ...(spec.mcpTask ? { mcpTask: true } : {}),
    // The fields below are written only when asked for: a record without them is what it was before them.
    ...(spec.envFile ? { envFile: spec.envFile.path } : {}),
    ...(spec.ready ? { ready: spec.ready, readyAt: null, readyAtSource: null } : {}),
    ...(spec.restart ? { restart: spec.restart, restarts: 0 } : {}),
    ...(spec.cpuCores !== null ? { cpuCores: spec.cpuCores } : {}),
    ...(spec.pidsMax !== null ? { pidsMax: spec.pidsMax } : {}),
    specDigest: spec.specDigest,
  };
}

/** Seconds from a task's creation to its deadline: its timeout, else the ceiling. */
export function deadlineSecondsOf(spec: CheckedRunSpec, ceilingSeconds: number): number {
  return spec.timeoutSeconds ?? ceilingSeconds;
}
