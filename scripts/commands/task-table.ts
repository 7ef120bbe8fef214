import type { TaskRecord } from "../../lib/mod.ts";

/** The fields every read command prints for a task. */
export function taskSummary(r: TaskRecord) {
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
  };
}

/** A plain table: one task a line, columns padded to fit. */
export function formatTable(rows: string[][]): string {
  const widths = rows[0].map((_, i) => rows.reduce((w, r) => Math.max(w, r[i].length), 0));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join("  ")).join("\n");
}

export function taskTable(records: TaskRecord[]): string {
  const rows = [["ID", "STATE", "EXIT", "PID", "PLACEMENT", "STARTED", "REASON"]];
  for (const r of records) {
    rows.push([
      r.id,
      r.state,
      r.exitCode === null ? "-" : String(r.exitCode),
      r.pid === null ? "-" : String(r.pid),
      r.placement,
      r.startedAt ?? "-",
      r.reason ?? "",
    ]);
  }
  return formatTable(rows);
}
