import { posix } from "node:path";
import { ALL_STATES, PLACEMENT_NAMES, SCHEMA_VERSION, type TaskLocation, type TaskRecord } from "./record.ts";
import { TASK_ID_PATTERN } from "./task-id.ts";

/** Why a record file cannot be used as it is. */
export type RecordProblem =
  | { kind: "corrupt"; reason: string }
  | { kind: "newer-schema"; schemaVersion: number; reason: string };

export type ParsedRecord = { ok: true; record: TaskRecord } | { ok: false; problem: RecordProblem };

type Check = (v: unknown) => boolean;
const str: Check = (v) => typeof v === "string";
const strOrNull: Check = (v) => v === null || typeof v === "string";
const intOrNull: Check = (v) => v === null || Number.isSafeInteger(v);
const posIntOrNull: Check = (v) => v === null || (Number.isSafeInteger(v) && (v as number) > 0);
const numOrNull: Check = (v) => v === null || (typeof v === "number" && Number.isFinite(v) && v > 0);
const isoDate: Check = (v) => typeof v === "string" && !Number.isNaN(Date.parse(v));
const isoOrNull: Check = (v) => v === null || isoDate(v);
const bool: Check = (v) => typeof v === "boolean";

const FIELDS: Record<string, Check> = {
  id: (v) => typeof v === "string" && TASK_ID_PATTERN.test(v),
  key: strOrNull,
  generation: intOrNull,
  command: (v) => {
    if (typeof v !== "object" || v === null) return false;
    const c = v as Record<string, unknown>;
    if ("argv" in c) return Array.isArray(c.argv) && c.argv.length > 0 && c.argv.every(str);
    return str(c.shell) && (c.shellPath === undefined || (str(c.shellPath) && (c.shellPath as string).startsWith("/")));
  },
  cwd: str,
  state: (v) => ALL_STATES.includes(v as never),
  exitCode: (v) => v === null || (Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 255),
  reason: strOrNull,
  createdAt: isoDate,
  startedAt: isoOrNull,
  finishedAt: isoOrNull,
  // Optional: records made before them lack them (and a previous release ignores fields it does not know).
  // Any string: a source a later release adds (no schema bump for an optional field) must not make a record corrupt.
  finishedAtSource: (v) => v === undefined || strOrNull(v),
  endedAfter: (v) => v === undefined || isoOrNull(v),
  durationMs: (v) => v === undefined || v === null || (Number.isSafeInteger(v) && (v as number) >= 0),
  lastOutputAt: isoOrNull,
  outputTail: strOrNull,
  timeoutSeconds: numOrNull,
  deadlineAt: isoDate,
  deadlineIsTimeout: bool,
  memoryMaxBytes: posIntOrNull,
  pid: posIntOrNull,
  pgid: posIntOrNull,
  commandPid: (v) => v === undefined || (Number.isSafeInteger(v) && (v as number) > 0),
  startTime: (v) => v === null || (typeof v === "string" && /^\d+$/.test(v)),
  bootId: str,
  incarnation: str,
  supervisorCgroup: strOrNull,
  placement: (v) => PLACEMENT_NAMES.includes(v as never),
  location: (v) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
    const l = v as Record<string, unknown>;
    return ["unit", "cgroupDir", "cgroup"].every((k) => l[k] === undefined || str(l[k])) &&
      (l.manager === undefined || l.manager === "user" || l.manager === "system");
  },
  killStartedAt: isoOrNull,
  killReason: strOrNull,
  killState: (v) => v === null || v === "killed" || v === "timed_out",
  acknowledgedAt: isoOrNull,
  // Any string: an origin a later outlive adds must not make this one quarantine the record.
  origin: (v) => v === undefined || v === null || str(v),
  pty: (v) => {
    if (v === undefined || v === null) return true;
    const p = v as Record<string, unknown>;
    return typeof v === "object" && [p.cols, p.rows].every((n) => Number.isSafeInteger(n) && (n as number) > 0);
  },
  maxOutputBytes: (v) => v === undefined || (Number.isSafeInteger(v) && (v as number) >= 0),
  outputBytes: (v) => {
    if (v === undefined || v === null) return true;
    if (typeof v !== "object" || Array.isArray(v)) return false;
    const o = v as Record<string, unknown>;
    return [o.stdout, o.stderr].every((n) => Number.isSafeInteger(n) && (n as number) >= 0);
  },
  envNames: (v) => v === undefined || (Array.isArray(v) && v.every((n) => typeof n === "string")),
  // ---- Kept after its end, and its own cancel (durable MCP tasks); optional, no schema bump. ----
  keepAfterEndMs: (v) => v === undefined || (Number.isSafeInteger(v) && (v as number) > 0),
  mcpTask: (v) => v === undefined || bool(v),
  cancelledAt: (v) => v === undefined || isoDate(v),
  envFile: (v) => v === undefined || strOrNull(v),
  ready: (v) => {
    if (v === undefined || v === null) return true;
    if (typeof v !== "object" || Array.isArray(v)) return false;
    const r = v as Record<string, unknown>;
    return strOrNull(r.log) && (r.port === null || (Number.isSafeInteger(r.port) && (r.port as number) > 0)) && strOrNull(r.http) &&
      typeof r.timeoutSeconds === "number" && r.timeoutSeconds > 0;
  },
  readyAt: (v) => v === undefined || isoOrNull(v),
  // Any string, as finishedAtSource: a source a later release adds must not make a record corrupt.
  readyAtSource: (v) => v === undefined || strOrNull(v),
  restart: (v) => {
    if (v === undefined || v === null) return true;
    if (typeof v !== "object" || Array.isArray(v)) return false;
    const r = v as Record<string, unknown>;
    return str(r.when) && [r.max, r.delayMs, r.delayMaxMs].every((n) => Number.isSafeInteger(n) && (n as number) > 0);
  },
  restarts: (v) => v === undefined || (Number.isSafeInteger(v) && (v as number) >= 0),
  cpuCores: (v) => v === undefined || numOrNull(v),
  pidsMax: (v) => v === undefined || posIntOrNull(v),
  limitEvents: (v) => {
    if (v === undefined || v === null) return true;
    if (typeof v !== "object" || Array.isArray(v)) return false;
    return Object.values(v as object).every((n) => n === null || (Number.isSafeInteger(n) && (n as number) >= 0));
  },
  specDigest: (v) => v === undefined || str(v),
};

/**
 * Turns the text of a record file into a TaskRecord, or says exactly what is
 * wrong with it. Pure: the caller decides what to do with a bad one.
 *
 * @example
 * ```ts
 * import { parseRecord } from "./parse-record.ts";
 * const r = parseRecord('{"schemaVersion": 1');
 * console.log(r.ok ? "fine" : r.problem.reason); // "not JSON: ..."
 * ```
 */
export function parseRecord(text: string, expectedId?: string): ParsedRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return bad(`not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return bad("not a JSON object");
  const raw = value as Record<string, unknown>;
  const version = raw.schemaVersion;
  if (!Number.isSafeInteger(version) || (version as number) < 1) {
    return bad(`schemaVersion must be a positive integer, got ${JSON.stringify(version)}`);
  }
  if ((version as number) > SCHEMA_VERSION) {
    return {
      ok: false,
      problem: {
        kind: "newer-schema",
        schemaVersion: version as number,
        reason: `written by a newer outlive (schema ${version}; this one reads up to ${SCHEMA_VERSION}); left untouched`,
      },
    };
  }
  for (const [field, check] of Object.entries(FIELDS)) {
    if (!check(raw[field])) return bad(`field "${field}" has an unexpected value: ${preview(raw[field])}`);
  }
  if (expectedId !== undefined && raw.id !== expectedId) {
    return bad(`record id ${JSON.stringify(raw.id)} does not match its directory ${JSON.stringify(expectedId)}`);
  }
  // Replay signals the group and writes cgroup.kill from these fields: they must name this task's own, nothing else.
  if (raw.pgid !== null && raw.pgid !== raw.pid) {
    return bad(`field "pgid" must equal "pid" (every task leads its own group), got ${preview(raw.pgid)} and ${preview(raw.pid)}`);
  }
  const location = locationProblem(raw.location as TaskLocation, raw.id as string);
  if (location) return bad(`field "location" ${location}`);
  return { ok: true, record: raw as unknown as TaskRecord };
}

/** A unit or cgroup directory must be named for this task (`<prefix>-task-<id>[.scope]`), as a clean absolute path. */
function locationProblem(l: TaskLocation, id: string): string | null {
  const own = new RegExp(`^[a-z][a-z0-9-]{0,30}-task-${id}$`);
  if (l.unit !== undefined && !(l.unit.endsWith(".scope") && own.test(l.unit.slice(0, -".scope".length)))) {
    return `names a unit that is not this task's scope: ${preview(l.unit)}`;
  }
  if (l.cgroupDir !== undefined) {
    const d = l.cgroupDir;
    if (!d.startsWith("/") || posix.normalize(d) !== d || d.endsWith("/") || !own.test(posix.basename(d).replace(/\.scope$/, ""))) {
      return `names a cgroup directory that is not this task's: ${preview(d)}`;
    }
    if (l.cgroup === undefined || !l.cgroup.startsWith("/") || !d.endsWith(l.cgroup)) {
      return `has a cgroup ${preview(l.cgroup)} that is not the end of its cgroup directory ${preview(d)}`;
    }
  }
  return null;
}

function bad(reason: string): ParsedRecord {
  return { ok: false, problem: { kind: "corrupt", reason } };
}

function preview(v: unknown): string {
  const s = v === undefined ? "missing" : JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}
