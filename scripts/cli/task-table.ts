import { isTerminal, type TaskRecord } from "../../lib/store/record/record.ts";
import type { ListeningPort } from "../../lib/ports/proc-net.ts";
import { portText } from "../../lib/ports/task-ports.ts";
import { ago, span } from "./relative-time.ts";
import { formatTable } from "./table.ts";

/**
 * Fields other parts of outlive add to a record when they know them; a
 * record written before them lacks them, so they are read, never required.
 */
interface LaterFields {
  commandPid?: number | null;
  durationMs?: number | null;
  finishedAtSource?: string | null;
  endedAfter?: string | null;
  origin?: string | null;
}

function later(r: TaskRecord): LaterFields {
  return r as TaskRecord & LaterFields;
}

/**
 * The fields every read command prints for a task (`--json`). Additive: a
 * field keeps its name and meaning once printed; times are ISO UTC.
 */
export function taskSummary(r: TaskRecord, ports?: ListeningPort[]) {
  const l = later(r);
  return {
    id: r.id,
    state: r.state,
    exitCode: r.exitCode,
    reason: r.reason,
    pid: r.pid,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    placement: r.placement,
    location: r.location.unit ?? r.location.cgroup ?? null,
    key: r.key,
    command: "argv" in r.command ? r.command.argv : r.command.shell,
    // A record from before shellPath was kept ran /bin/sh.
    shellPath: "argv" in r.command ? null : r.command.shellPath ?? "/bin/sh",
    lastOutputAt: r.lastOutputAt,
    acknowledgedAt: r.acknowledgedAt,
    // Added with issue 21; null where the record does not know them.
    commandPid: l.commandPid ?? null,
    createdAt: r.createdAt,
    durationMs: durationMsOf(r),
    finishedAtSource: l.finishedAtSource ?? null,
    endedAfter: l.endedAfter ?? null,
    generation: r.generation,
    // Added with issue 34; null where the record does not know them. Ports are read from /proc now, for live tasks.
    readyAt: r.readyAt ?? null,
    readyAtSource: r.readyAtSource ?? null,
    restarts: r.restarts ?? null,
    ports: ports ?? (isTerminal(r.state) ? [] : null),
  };
}

/** How long a finished task ran: the record's own durationMs, else from its start to its end; null while it runs. */
export function durationMsOf(r: TaskRecord): number | null {
  const own = later(r).durationMs;
  if (typeof own === "number") return own;
  if (!isTerminal(r.state) || r.finishedAt === null) return null;
  const from = Date.parse(r.startedAt ?? r.createdAt);
  const to = Date.parse(r.finishedAt);
  return Number.isFinite(from) && Number.isFinite(to) ? Math.max(0, to - from) : null;
}

/** The user's command on one line: an argv joined (words with spaces quoted), a shell string as written. */
export function commandLine(r: TaskRecord): string {
  const text = "argv" in r.command ? r.command.argv.map(quoteWord).join(" ") : r.command.shell;
  return text.replace(/\s+/g, " ").trim();
}

function quoteWord(word: string): string {
  return word !== "" && /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** `text` cut to `width` characters, an ellipsis marking the cut. */
export function shorten(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

/** The pid a person looks for: the user's command's own, else the task's group leader. */
export function shownPid(r: TaskRecord): number | null {
  return later(r).commandPid ?? r.pid;
}

/** A live task's age (`up 3m12s`), a finished one's duration and how long ago it ended (`ran 12s, 3m ago`). */
export function timeCell(r: TaskRecord, now: number): string {
  if (!isTerminal(r.state)) return r.startedAt ?? r.createdAt ? `up ${span(now - Date.parse(r.startedAt ?? r.createdAt))}` : "-";
  const ran = durationMsOf(r);
  const ended = r.finishedAt ? ago(r.finishedAt, now) : null;
  return [ran === null ? null : `ran ${span(ran)}`, ended].filter(Boolean).join(", ") || "-";
}

export interface TableOptions {
  /** The width COMMAND is cut to; Infinity for the whole command (default 40). */
  commandWidth?: number;
  /** Add the REASON column (the commands that print what just happened to a task: wait, kill, ack). */
  reason?: boolean;
  now?: number;
  /** Add the PORTS column: each live task's listening sockets, by id (ps). */
  ports?: Map<string, ListeningPort[]>;
}

/** What the PORTS column shows: the task's sockets, `-` for none, at most three and a count of the rest. */
export function portsCell(ports: ListeningPort[] | undefined): string {
  if (!ports || ports.length === 0) return "-";
  const shown = ports.slice(0, 3).map(portText).join(",");
  return ports.length > 3 ? `${shown},+${ports.length - 3}` : shown;
}

/** The table people scan: ID, STATE, EXIT, PID, COMMAND, TIME, KEY (and PORTS, REASON). */
export function taskTable(records: TaskRecord[], { commandWidth = 40, reason = false, now = Date.now(), ports }: TableOptions = {}): string {
  const rows = [["ID", "STATE", "EXIT", "PID", "COMMAND", "TIME", "KEY", ...(ports ? ["PORTS"] : []), ...(reason ? ["REASON"] : [])]];
  for (const r of records) {
    const pid = shownPid(r);
    rows.push([
      r.id,
      r.state,
      r.exitCode === null ? "-" : String(r.exitCode),
      pid === null ? "-" : String(pid),
      shorten(commandLine(r), commandWidth),
      timeCell(r, now),
      r.key ?? "-",
      ...(ports ? [portsCell(ports.get(r.id))] : []),
      ...(reason ? [r.reason ?? ""] : []),
    ]);
  }
  return formatTable(rows);
}
