import { execFile, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { CLI } from "../support/cli.ts";

/** What examples/clients/{python,rust} print as their last line (see their demo). */
export interface DemoReport {
  client: string;
  ok: boolean;
  problems: string[];
  tasks: { first: string; survivor: string; marker2: string; marker3: string };
  servers: Array<{ n: number; pid: number; role: string; protocolVersion: string }>;
  deliveries: Array<{ server: number; id: string; state: string; exitCode: number | null }>;
  survivorStateAtKill: string;
  ackedAt: string | null;
  unknownTaskError: { code: number; dataCode: string } | null;
}

/**
 * The outlive command the clients start `serve` with: `OUTLIVE_COMMAND` when
 * set (words split on spaces, e.g. `OUTLIVE_COMMAND=dist/exe/outlive` for the
 * single executable), else the built CLI as installed (`outlive` is
 * dist/scripts/bin.js) under this Node.
 */
export const OUTLIVE_ARGV = process.env.OUTLIVE_COMMAND
  ? process.env.OUTLIVE_COMMAND.trim().split(/\s+/)
  : [process.execPath, fileURLToPath(new URL("../../dist/scripts/bin.js", import.meta.url))];

/** Runs a client's demo in a process of its own; resolves with its exit code, stdout and stderr. */
export function runDemo(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(argv[0], argv.slice(1), { env, timeout: 120_000, maxBuffer: 8 << 20 }, (error, out, err) =>
      resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, out, err }));
  });
}

/** The JSON line the demo ends its stdout with. */
export function lastJsonLine(out: string): DemoReport {
  const line = out.trim().split("\n").at(-1) ?? "";
  return JSON.parse(line) as DemoReport;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The promises, asserted on the client's report (not on its own verdict) and on the
 * storage as the CLI reads it: the survivor's completion came exactly once, from the server
 * started after the SIGKILL, with exit code 7; the ack held (server 3 sent nothing acknowledged).
 */
export function expectPromisesHeld(run: { code: number; out: string; err: string }, storage: string): DemoReport {
  const why = `${run.out.slice(-3000)}\nstderr: ${run.err.slice(-2000)}`;
  const report = lastJsonLine(run.out);
  const of = (id: string) => report.deliveries.filter((d) => d.id === id);
  expect(report.servers.map((s) => [s.n, s.role, s.protocolVersion]), why).toEqual([[1, "holder", "1"], [2, "holder", "1"], [3, "holder", "1"]]);
  expect(of(report.tasks.first), why).toEqual([{ server: 1, id: report.tasks.first, state: "exited", exitCode: 3 }]);
  expect(report.unknownTaskError, why).toEqual({ code: -32000, dataCode: "E_NO_TASK" });
  expect(report.survivorStateAtKill, why).toBe("running");
  expect(of(report.tasks.survivor), why).toEqual([{ server: 2, id: report.tasks.survivor, state: "exited", exitCode: 7 }]);
  expect(typeof report.ackedAt, why).toBe("string");
  expect(report.deliveries.filter((d) => d.server === 3).map((d) => d.id), why).toEqual([report.tasks.marker3]);
  expect(report.problems, why).toEqual([]);
  expect(report.ok, why).toBe(true);
  expect(run.code, why).toBe(0);
  // The storage says the same, read by the CLI with no server running.
  const inspect = spawnSync(process.execPath, [CLI, "inspect", report.tasks.survivor, "--json", "--storage", storage], { encoding: "utf8", timeout: 60_000 });
  expect(inspect.status, inspect.stderr).toBe(0);
  const record = JSON.parse(inspect.stdout.trim());
  expect([record.state, record.exitCode, record.acknowledgedAt]).toEqual(["exited", 7, report.ackedAt]);
  // Every server the demo started is gone: a sidecar never outlives its parent.
  expect(report.servers.filter((s) => alive(s.pid)).map((s) => s.pid)).toEqual([]);
  return report;
}
