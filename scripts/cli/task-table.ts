import type { TaskRecord } from "../../lib/mod.ts";
import { formatTable } from "./table.ts";

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
