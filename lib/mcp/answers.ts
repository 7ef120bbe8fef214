// Deno reads the SDK's types from these paths: its package maps `./*` to `*.d.ts`, which for a
// `.js` subpath names `mcp.js.d.ts`; tsc finds `mcp.d.ts` anyway, Deno's check does not. Types only.
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/types.d.ts"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { isTerminal, type TaskRecord } from "../store/record/record.ts";
import type { ListeningPort } from "../ports/proc-net.ts";
import { portText } from "../ports/task-ports.ts";

/**
 * What each tool answers: text a model reads first (the task's state and
 * the record's own `reason`, never a guess), and the same as
 * `structuredContent` for a program. Pure: records in, results out.
 */

/** The last output a task's answer quotes, at most this many characters (the record keeps more). */
const TAIL_CHARS = 2000;

/** One task, in words. */
export function taskAnswer(record: TaskRecord, lead = ""): CallToolResult {
  return result(`${lead}${describeTask(record)}`, { task: record });
}

/** `wait_task`: the task, and whether it ended (or, until ready, became ready) before the time ran out. */
export function waitAnswer(record: TaskRecord, timeoutSeconds: number, until: "end" | "ready" = "end"): CallToolResult {
  const ended = isTerminal(record.state);
  if (until === "ready") {
    const ready = Boolean(record.readyAt);
    const lead = ready ? "" : `Not ready yet after waiting ${timeoutSeconds} s (still ${record.state}); call wait_task with until "ready" again to keep waiting.\n`;
    return result(`${lead}${describeTask(record)}`, { task: record, ended, ready });
  }
  const lead = ended ? "" : `Still ${record.state} after waiting ${timeoutSeconds} s; call wait_task again to keep waiting.\n`;
  return result(`${lead}${describeTask(record)}`, { task: record, ended });
}

/**
 * `run_task`: what was started, kept or replaced, and, when it waited for
 * readiness `waitedSeconds`, whether the task is ready (with its ports).
 */
export function runAnswer(record: TaskRecord & { ensured?: { outcome: string; replaced: string | null; differs: string[] } }, waitedSeconds: number | null): CallToolResult {
  const e = record.ensured;
  const lead = e?.outcome === "kept"
    ? `Kept task ${record.id}: it already runs under key ${JSON.stringify(record.key)} with the same spec, so no second one was started.\n`
    : e?.outcome === "replaced"
    ? `Started task ${record.id}, replacing ${e.replaced} under key ${JSON.stringify(record.key)} (its ${e.differs.join(", ")} differed).\n`
    : `Started task ${record.id}.\n`;
  const waiting = waitedSeconds === null || record.readyAt
    ? ""
    : `Not ready yet after waiting ${waitedSeconds} s (still ${record.state}); call wait_task with until "ready" to keep waiting.\n`;
  const structured: Record<string, unknown> = { task: record };
  if (waitedSeconds !== null) structured.ready = Boolean(record.readyAt);
  return result(`${lead}${waiting}${describeTask(record)}`, structured);
}

/** `list_tasks`: one line a task, oldest first; only the newest `limit` of them, saying how many more there are. */
export function listAnswer(records: TaskRecord[], filter: string, limit: number): CallToolResult {
  const shown = records.slice(-limit);
  const older = records.length - shown.length;
  const head = older === 0
    ? `${records.length} task${records.length === 1 ? "" : "s"}${filter}, oldest first:`
    : `${records.length} tasks${filter}; the newest ${shown.length}, oldest first (${older} older not shown: raise limit, or filter by state or key):`;
  const text = records.length === 0 ? `No tasks${filter}.` : [head, ...shown.map(taskLine)].join("\n");
  return result(text, { tasks: shown, total: records.length });
}

/** What each `how` of a kill (lib/kill) means, in words; an unknown one is said as it is. */
const KILL_WORDS: Record<string, string> = {
  term: "it ended on SIGTERM within the grace period",
  kill: "it outlived the grace period, so it was sent SIGKILL",
  "already-gone": "its process was already gone",
  "pid-reused": "its pid belonged to another process by then, so only the task's own cgroup was ended",
  terminal: "it had already ended; nothing was killed",
};

/** `kill_task`: what the kill did, and the task as it is now. */
export function killAnswer(record: TaskRecord, how: string): CallToolResult {
  return result(`Kill: ${KILL_WORDS[how] ?? how}.\n${describeTask(record)}`, { task: record, how });
}

/** A chunk of output from `output`, as text. */
export interface OutputChunk {
  id: string;
  stream: string;
  offset: number;
  missed: number;
  next: number;
  size: number;
  done: boolean;
  text: string;
}

/** `task_output`: the text, and where to continue. */
export function outputAnswer(chunk: OutputChunk): CallToolResult {
  const head = [
    `${chunk.stream} of task ${chunk.id}, bytes ${chunk.offset}–${chunk.next} of ${chunk.size}`,
    chunk.missed > 0 ? ` (${chunk.missed} earlier bytes were dropped by the task's output bound)` : "",
    chunk.done ? "; that is all: the task has ended." : chunk.next < chunk.size ? `; more follows: call task_output with from=${chunk.next}.` : `; the task still runs: call task_output with from=${chunk.next} later for more.`,
  ].join("");
  return result(chunk.text === "" ? `${head}\n(no new output)` : `${head}\n${chunk.text}`, { ...chunk });
}

/** `send_input`: how many bytes reached the terminal. */
export function inputAnswer(id: string, bytes: number): CallToolResult {
  return result(`Typed ${bytes} byte${bytes === 1 ? "" : "s"} into task ${id}'s terminal.`, { id, bytes });
}

/** `run_task` with waitReady, when the task ended or its ready timeout passed first: started, and not ready, in the model's words. */
export function notReadyAnswer(id: string, error: Error & { task?: TaskRecord }): CallToolResult {
  const task = error.task;
  const text = `Started task ${id}, but it is not ready: ${error.message}${task ? `\n${describeTask(task)}` : ""}`;
  return { ...result(text, { ...(task ? { task } : {}), ready: false, error: { code: "E_NOT_READY", message: error.message } }), isError: true };
}

/** A tool's failure: what went wrong, with outlive's code, as a tool error the model sees. */
export function errorAnswer(tool: string, error: unknown): CallToolResult {
  const message = error instanceof Error ? error.message : String(error);
  const data = (error as { data?: { code?: unknown } }).data;
  const own = (error as { code?: unknown }).code;
  const code = typeof data?.code === "string" ? data.code : typeof own === "string" ? own : typeof own === "number" ? String(own) : "E_INTERNAL";
  return { ...result(`${tool} failed: ${message} [${code}]`, { error: { code, message } }), isError: true };
}

/** A task in a few sentences: what it runs, its state and why, and its last output once it ended. */
export function describeTask(r: TaskRecord): string {
  const lines = [taskLine(r)];
  if (r.key !== null) lines.push(`Key: ${r.key}${r.generation === null ? "" : `, generation ${r.generation}`}.`);
  if (isTerminal(r.state)) {
    if (r.finishedAt) lines.push(`Finished at ${r.finishedAt}${typeof r.durationMs === "number" ? ` after ${r.durationMs} ms` : ""}.`);
    lines.push(r.acknowledgedAt ? `Acknowledged at ${r.acknowledgedAt}.` : "Not acknowledged yet: call ack_task once you have used this result.");
    const tail = r.outputTail?.trimEnd() ?? "";
    if (tail !== "") lines.push(`Last output:\n${tail.length > TAIL_CHARS ? `…${tail.slice(-TAIL_CHARS)}` : tail}`);
  } else {
    if (r.state === "killing" && r.killReason) lines.push(`Being killed: ${r.killReason}.`);
    lines.push(`Started at ${r.startedAt ?? r.createdAt}; deadline ${r.deadlineAt}${r.deadlineIsTimeout ? " (its timeout)" : " (the default ceiling)"}.`);
    if (r.ready) lines.push(r.readyAt ? `Ready since ${r.readyAt} (${r.readyAtSource}).` : "Not ready yet.");
    const ports = (r as TaskRecord & { ports?: ListeningPort[] }).ports;
    if (ports) lines.push(ports.length === 0 ? "Listening on no port yet." : `Listening on ${ports.map(portWords).join(", ")}.`);
  }
  if (r.restart) lines.push(`Restarted ${r.restarts ?? 0} time${r.restarts === 1 ? "" : "s"} (policy ${r.restart.when}, at most ${r.restart.max}).`);
  return lines.join("\n");
}

/** A listening socket as an agent uses it: a TCP port as a URL it may open, a UDP one as it is. */
function portWords(p: ListeningPort): string {
  if (p.proto === "udp") return `udp ${portText(p)}`;
  // A wildcard address is reached on the loopback one.
  const host = p.address === "0.0.0.0" ? "127.0.0.1" : p.address === "::" ? "[::1]" : p.address.includes(":") ? `[${p.address}]` : p.address;
  return `tcp ${portText(p)} (http://${host}:${p.port}/ if it serves HTTP)`;
}

/** One line: id, state (with the exit code), pid or reason, and the command. */
function taskLine(r: TaskRecord): string {
  const command = "argv" in r.command ? JSON.stringify(r.command.argv) : JSON.stringify(r.command.shell);
  if (!isTerminal(r.state)) return `Task ${r.id} is ${r.state}${r.pid === null ? "" : ` (pid ${r.commandPid ?? r.pid})`}: ${command}.`;
  const reason = r.reason ?? "no reason recorded";
  // The reason usually names the exit code already ("exited with code 3"); it is said once.
  const code = r.exitCode === null ? "no exit code; " : reason.includes(`code ${r.exitCode}`) ? "" : `exit code ${r.exitCode}; `;
  return `Task ${r.id} is ${r.state} (${code}${reason}): ${command}.`;
}

function result(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text }], structuredContent: structured };
}
