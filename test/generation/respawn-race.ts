// The real-process reproduction of field-notes section 3, shared by the
// vitest file and the Deno test so both runtimes run the very same race.
// No test framework here: each scenario returns what it observed.
import { spawn, type ChildProcess } from "node:child_process";
import {
  childProcessSource,
  GenerationTable,
  type ChildProcessSpec,
  type ExitEvent,
  type ProcessSource,
  type RetiredEvent,
} from "../../lib/generation/mod.ts";
import { isRunning } from "../../lib/proc/identity.ts";
import { waitFor } from "../support/wait.ts";

/**
 * Traps TERM (installed before it says "old ready"), keeps writing every
 * 20 ms, and exits 143 about 600 ms after the TERM: the predecessor whose
 * late output and close caused the bug.
 */
export const PREDECESSOR: ChildProcessSpec = {
  command: "node",
  args: [
    "-e",
    `let n = 0, term = false;
     process.on("SIGTERM", () => { if (term) return; term = true; console.log("old got TERM"); setTimeout(() => process.exit(143), 600); });
     console.log("old ready");
     setInterval(() => console.log("old " + n++), 20);`,
  ],
};

/** A successor that stays until killed; `exec` so the pid we hold is the sleeper itself. */
export const LONG_SUCCESSOR: ChildProcessSpec = { command: "sh", args: ["-c", "echo new ready; exec sleep 30"] };

/** A successor that exits long before the predecessor's late close. */
export const QUICK_SUCCESSOR: ChildProcessSpec = { command: "sh", args: ["-c", "echo new ready; exit 7"] };

export const KEY = "session-1";

/** Raw output as the processes wrote it, before the table decides what is current. */
export interface RawChunk {
  pid: number | null;
  at: number;
  text: string;
}

/** Wraps a source to see every chunk a process wrote, stale or not: proof the race window was really exercised. */
export function tapped(source: ProcessSource<ChildProcessSpec>, raw: RawChunk[]): ProcessSource<ChildProcessSpec> {
  return {
    start(spec, sink) {
      const box: { pid: number | null } = { pid: null };
      const handle = source.start(spec, {
        ...sink,
        output: (stream, data) => {
          raw.push({ pid: box.pid, at: Date.now(), text: String(data) });
          sink.output(stream, data);
        },
      });
      box.pid = handle.pid;
      return handle;
    },
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Every test ends what it started, by pid, whatever the table believes, and
 * waits until each one is really gone.
 */
export async function endByPid(pids: Iterable<number | null | undefined>): Promise<void> {
  const started = [...pids].filter((pid): pid is number => typeof pid === "number");
  for (const pid of started) {
    if (isRunning(pid)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // It ended between the check and the kill: that is what we wanted.
      }
    }
  }
  await waitFor(`pids ${started.join(", ")} to end`, () => started.every((pid) => !isRunning(pid)));
}

/**
 * What a caller of a keyed table saw of the successor, and what the table
 * says about it. `violations` judges it; the same judge is applied to the
 * naive table and to `GenerationTable`.
 */
export interface SuccessorView {
  /** Output delivered while the successor owned the key (what the caller would append to the new turn). */
  deliveredToSuccessor: string;
  /** Exits reported for the key while the successor was still running. */
  exitsWhileSuccessorAlive: number;
  /** Whether the table still tracks the successor once the predecessor is gone. */
  successorTracked: boolean;
  /** Whether the successor could be killed through the table. */
  successorKillable: boolean;
  /** How many exits were reported for the key once the successor itself ended. */
  successorExitReports: number;
}

export function violations(view: SuccessorView): string[] {
  const found: string[] = [];
  if (view.deliveredToSuccessor.includes("old")) found.push(`the predecessor's output reached the successor: ${JSON.stringify(view.deliveredToSuccessor.slice(0, 80))}`);
  if (view.exitsWhileSuccessorAlive > 0) found.push(`${view.exitsWhileSuccessorAlive} exit(s) reported while the successor was alive`);
  if (!view.successorTracked) found.push("the successor was no longer tracked (orphaned)");
  if (!view.successorKillable) found.push("the successor could not be killed through the table");
  if (view.successorExitReports !== 1) found.push(`the successor's exit was reported ${view.successorExitReports} times, not once`);
  return found;
}

/**
 * The "before": the app from the field notes. A Map keyed by session id;
 * spawning kills the old child and registers the new one; every handler
 * looks the key up.
 */
export class NaiveTable {
  readonly children = new Map<string, ChildProcess>();
  readonly turns = new Map<string, string>();
  readonly exits: Array<{ key: string; code: number | null; at: number }> = [];

  spawn(key: string, spec: ChildProcessSpec): ChildProcess {
    this.children.get(key)?.kill("SIGTERM");
    const child = spawn(spec.command, spec.args ?? [], { stdio: ["ignore", "pipe", "pipe"] });
    this.children.set(key, child);
    this.turns.set(key, "");
    child.stdout!.on("data", (data) => this.turns.set(key, (this.turns.get(key) ?? "") + String(data)));
    child.on("close", (code) => {
      this.exits.push({ key, code, at: Date.now() });
      this.children.delete(key);
    });
    return child;
  }

  kill(key: string): boolean {
    return this.children.get(key)?.kill("SIGTERM") ?? false;
  }
}

/** The reproduction against the naive table. Returns its view and every pid it started. */
export async function runNaive(): Promise<{ view: SuccessorView; pids: number[] }> {
  const table = new NaiveTable();
  const pids: number[] = [];
  try {
    const old = table.spawn(KEY, PREDECESSOR);
    pids.push(old.pid!);
    await waitFor("the predecessor to trap TERM", () => (table.turns.get(KEY) ?? "").includes("old ready"));
    const successor = table.spawn(KEY, LONG_SUCCESSOR);
    pids.push(successor.pid!);
    const oldClosed = new Promise((resolve) => old.on("close", resolve));
    await oldClosed;
    const exitsWhileSuccessorAlive = table.exits.filter(() => isRunning(successor.pid!)).length;
    const successorTracked = table.children.get(KEY) === successor;
    const successorKillable = table.kill(KEY);
    // Give the successor its chance to be reported (it is not, once orphaned).
    await sleep(300);
    const view: SuccessorView = {
      deliveredToSuccessor: table.turns.get(KEY) ?? "",
      exitsWhileSuccessorAlive,
      successorTracked,
      successorKillable,
      successorExitReports: table.exits.length - exitsWhileSuccessorAlive,
    };
    return { view, pids };
  } finally {
    await endByPid(pids);
  }
}

export interface GuardedRun {
  view: SuccessorView;
  pids: number[];
  raw: RawChunk[];
  exits: ExitEvent[];
  retired: RetiredEvent[];
  outputs: Array<{ generation: number; text: string }>;
  predecessorPid: number;
  successorPid: number;
}

/** The same reproduction against `GenerationTable`, with a successor that lives until killed. */
export async function runGuarded(): Promise<GuardedRun> {
  const raw: RawChunk[] = [];
  const table = new GenerationTable(tapped(childProcessSource(), raw));
  const exits: ExitEvent[] = [];
  const retired: RetiredEvent[] = [];
  const outputs: Array<{ generation: number; text: string }> = [];
  table.on("exit", (e) => exits.push(e));
  table.on("retired", (e) => retired.push(e));
  table.on("output", (e) => outputs.push({ generation: e.generation, text: String(e.data) }));
  const pids: number[] = [];
  try {
    const first = table.spawn(KEY, PREDECESSOR);
    pids.push(first.pid!);
    await waitFor("the predecessor to trap TERM", () => outputs.some((o) => o.text.includes("old ready")));
    const second = table.spawn(KEY, LONG_SUCCESSOR);
    pids.push(second.pid!);
    await waitFor("the predecessor to settle", () => retired.length > 0);
    const successorOutput = outputs.filter((o) => o.generation === second.generation).map((o) => o.text).join("");
    const exitsWhileSuccessorAlive = exits.filter(() => isRunning(second.pid!)).length;
    const successorTracked = table.current(KEY)?.generation === second.generation && table.live().length === 1;
    const killed = table.kill(KEY);
    const successorKillable = killed.ok && killed.generation === second.generation && killed.delivered;
    await waitFor("the successor's exit", () => exits.length > exitsWhileSuccessorAlive);
    await sleep(200); // room for a duplicate report, which must not come
    const view: SuccessorView = {
      deliveredToSuccessor: successorOutput,
      exitsWhileSuccessorAlive,
      successorTracked,
      successorKillable,
      successorExitReports: exits.filter((e) => e.generation === second.generation).length,
    };
    return { view, pids, raw, exits, retired, outputs, predecessorPid: first.pid!, successorPid: second.pid! };
  } finally {
    table.killAll("SIGKILL");
    await endByPid(pids);
  }
}

/** The hole reviewers found: the successor exits BEFORE the predecessor's late close. */
export async function runSuccessorExitsFirst(): Promise<{
  pids: number[];
  raw: RawChunk[];
  exits: ExitEvent[];
  retired: RetiredEvent[];
  outputs: Array<{ generation: number; text: string; afterSupersede: boolean }>;
  afterSuccessorExit: { current: unknown; liveGenerations: number[]; predecessorCurrent: boolean; exitAt: number };
  predecessorPid: number;
  successorGeneration: number;
  predecessorGeneration: number;
}> {
  const raw: RawChunk[] = [];
  const table = new GenerationTable(tapped(childProcessSource(), raw));
  const exits: ExitEvent[] = [];
  const retired: RetiredEvent[] = [];
  const outputs: Array<{ generation: number; text: string; afterSupersede: boolean }> = [];
  let superseded = false;
  let afterSuccessorExit: { current: unknown; liveGenerations: number[]; predecessorCurrent: boolean; exitAt: number } | null = null;
  let predecessorGeneration = 0;
  table.on("exit", (e) => {
    exits.push(e);
    // Look at the table at the very moment the successor's exit is handled.
    afterSuccessorExit = {
      current: table.current(KEY),
      liveGenerations: table.live().map((g) => g.generation),
      predecessorCurrent: table.isCurrent(KEY, predecessorGeneration),
      exitAt: Date.now(),
    };
  });
  table.on("retired", (e) => retired.push(e));
  table.on("output", (e) => outputs.push({ generation: e.generation, text: String(e.data), afterSupersede: superseded }));
  const pids: number[] = [];
  try {
    const first = table.spawn(KEY, PREDECESSOR);
    predecessorGeneration = first.generation;
    pids.push(first.pid!);
    await waitFor("the predecessor to trap TERM", () => outputs.some((o) => o.text.includes("old ready")));
    const second = table.spawn(KEY, QUICK_SUCCESSOR);
    superseded = true;
    pids.push(second.pid!);
    await waitFor("the predecessor to settle", () => retired.length > 0);
    await sleep(200);
    if (afterSuccessorExit === null) throw new Error("the successor's exit was never reported");
    return {
      pids,
      raw,
      exits,
      retired,
      outputs,
      afterSuccessorExit,
      predecessorPid: first.pid!,
      successorGeneration: second.generation,
      predecessorGeneration: first.generation,
    };
  } finally {
    table.killAll("SIGKILL");
    await endByPid(pids);
  }
}
