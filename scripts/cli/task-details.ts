import { isTerminal, type TaskRecord } from "../../lib/store/record/record.ts";
import { ago, span } from "./relative-time.ts";
import { commandLine, durationMsOf } from "./task-table.ts";
import type { ListeningPort } from "../../lib/ports/proc-net.ts";
import { portText } from "../../lib/ports/task-ports.ts";

/** What a task's output holds on disk, per stream: bytes written in all, and bytes dropped at the head by the bound. */
export interface OutputSizes {
  stdout: { bytes: number; dropped: number } | null;
  stderr: { bytes: number; dropped: number } | null;
}

/** Fields other parts of outlive add when they know them: shown when present, never required. */
interface LaterFields {
  commandPid?: number | null;
  finishedAtSource?: string | null;
  endedAfter?: string | null;
  origin?: string | null;
  envNames?: string[];
}

/**
 * A whole record as a person reads it: one `name: value` line a fact, times
 * in ISO UTC with how long ago, env names (never values), the fields an
 * older record lacks left out. Pure.
 *
 * @example
 * ```ts
 * import { taskDetails } from "./task-details.ts";
 * const r = { id: "t-1", state: "exited", exitCode: 0, command: { argv: ["true"] }, cwd: "/", location: {} } as never;
 * console.log(taskDetails(r, { stdout: null, stderr: null }, 0).split("\n")[0]); // "id:           t-1"
 * ```
 */
export function taskDetails(r: TaskRecord, output: OutputSizes, now: number, ports?: ListeningPort[]): string {
  const l = r as TaskRecord & LaterFields;
  const ready = r.ready;
  const restart = r.restart;
  const events = r.limitEvents;
  const lines: Array<[string, string | null | undefined]> = [
    ["id", r.id],
    ["state", r.state],
    ["exit code", r.exitCode === null ? "-" : String(r.exitCode)],
    ["reason", r.reason],
    ["command", "argv" in r.command ? `${commandLine(r)}  (argv ${JSON.stringify(r.command.argv)})` : r.command.shell],
    ["shell", "argv" in r.command ? null : r.command.shellPath ?? "/bin/sh"],
    ["cwd", r.cwd],
    ["env set", l.envNames === undefined ? null : l.envNames.length === 0 ? "none (the starter's environment only)" : `${l.envNames.join(", ")} (values not shown)`],
    ["env file", r.envFile ? `${r.envFile} (read at run; values not kept)` : null],
    ["key", r.key === null ? "-" : `${r.key} (generation ${r.generation ?? "-"})`],
    ["origin", l.origin],
    ["timeout", r.timeoutSeconds === null ? "none" : `${span(r.timeoutSeconds * 1000)} (${r.timeoutSeconds} s)`],
    ["deadline", `${r.deadlineAt} (${r.deadlineIsTimeout ? "its timeout" : "the ceiling"})`],
    ["memory cap", r.memoryMaxBytes === null ? "none" : `${r.memoryMaxBytes} bytes`],
    ["cpu limit", r.cpuCores == null ? null : `${r.cpuCores} cores`],
    ["pids limit", r.pidsMax == null ? null : `${r.pidsMax} processes`],
    ["limits did", events ? limitEventsText(events) : null],
    ["ready when", ready ? readyWords(ready) : null],
    ["ready", ready ? (r.readyAt ? `${at(r.readyAt, now)}, from ${r.readyAtSource ?? "?"}` : isTerminal(r.state) ? "never" : "not yet") : null],
    ["ports", ports === undefined ? null : ports.length === 0 ? "none listening" : ports.map(portText).join(", ")],
    ["restart", restart ? `${restart.when}, at most ${restart.max} times, ${restart.delayMs} ms doubling to ${restart.delayMaxMs} ms` : null],
    ["restarts", restart ? String(r.restarts ?? 0) : null],
    ["placement", r.placement],
    ["unit", r.location.unit ? `${r.location.unit}${r.location.manager ? ` (${r.location.manager} manager)` : ""}` : null],
    ["cgroup", r.location.cgroup ?? r.location.cgroupDir],
    ["pid", r.pid === null ? "-" : `${r.pid} (group leader${r.pgid === null ? "" : `, pgid ${r.pgid}`})`],
    ["command pid", l.commandPid === undefined || l.commandPid === null ? null : String(l.commandPid)],
    ["pty", r.pty ? `${r.pty.cols}x${r.pty.rows}` : null],
    ["stdout", streamLine(output.stdout, r.outputBytes?.stdout)],
    ["stderr", streamLine(output.stderr, r.outputBytes?.stderr)],
    ["output bound", r.maxOutputBytes === undefined ? null : r.maxOutputBytes === 0 ? "none (all kept)" : `${r.maxOutputBytes} bytes a stream`],
    ["created", at(r.createdAt, now)],
    ["started", at(r.startedAt, now)],
    ["ended after", at(l.endedAfter, now)],
    ["finished", r.finishedAt ? `${at(r.finishedAt, now)}${l.finishedAtSource ? `, from ${l.finishedAtSource}` : ""}` : null],
    ["duration", durationOf(r)],
    ["last output", at(r.lastOutputAt, now)],
    ["kill", r.killStartedAt ? `${at(r.killStartedAt, now)}: ${r.killReason ?? ""}` : null],
    ["acknowledged", r.acknowledgedAt ? at(r.acknowledgedAt, now) : isTerminal(r.state) ? "no" : null],
    ["incarnation", r.incarnation],
  ];
  const shown = lines.filter((line): line is [string, string] => line[1] !== null && line[1] !== undefined);
  const width = Math.max(...shown.map(([name]) => name.length)) + 2;
  return shown.map(([name, value]) => `${`${name}:`.padEnd(width)}${value}`).join("\n");
}

function readyWords(ready: NonNullable<TaskRecord["ready"]>): string {
  const parts = [ready.log !== null ? `a line matches /${ready.log}/` : null, ready.port !== null ? `it listens on TCP ${ready.port}` : null, ready.http !== null ? `${ready.http} answers 2xx/3xx` : null];
  return `${parts.filter(Boolean).join(" and ")} (wait up to ${ready.timeoutSeconds} s)`;
}

function limitEventsText(e: NonNullable<TaskRecord["limitEvents"]>): string {
  const parts = [
    e.forksRefused === null ? null : `${e.forksRefused} fork${e.forksRefused === 1 ? "" : "s"} refused at the pids limit`,
    e.cpuThrottledPeriods === null ? null : `throttled in ${e.cpuThrottledPeriods} periods, ${Math.round((e.cpuThrottledUsec ?? 0) / 1000)} ms in all`,
  ];
  return parts.filter(Boolean).join("; ") || "nothing recorded";
}

function at(iso: string | null | undefined, now: number): string | null {
  return iso ? `${iso} (${ago(iso, now)})` : null;
}

function durationOf(r: TaskRecord): string | null {
  const ms = durationMsOf(r);
  return ms === null ? null : `${span(ms)} (${ms} ms)`;
}

function streamLine(sizes: { bytes: number; dropped: number } | null, recorded: number | undefined): string | null {
  const bytes = recorded ?? sizes?.bytes;
  if (bytes === undefined) return null;
  const dropped = sizes?.dropped ?? 0;
  return `${bytes} bytes${dropped > 0 ? `, ${dropped} dropped by the bound (${bytes - dropped} kept)` : ""}`;
}
