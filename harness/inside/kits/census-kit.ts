/**
 * Real processes for the census-* scenarios: a stand-in agent harness that
 * starts the children it is told to, MCP server stand-ins, the
 * `outlive census` CLI, and ending by pid everything a scenario started.
 */
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { $ } from "zx";
import { isRunning, readProcStat, takeSnapshot, underLeader, type CensusProcess, type IdleDecision } from "../../../lib/internal.ts";
import { projectRoot } from "../../shared/project-root.ts";
import type { ScenarioContext } from "../context.ts";

/** One child the stand-in harness starts; `setsid` makes it a session of its own (node's `detached`). */
export interface ChildPlan {
  argv: string[];
  setsid?: boolean;
}

export interface FakeHarness {
  pid: number;
  /** Clock ticks since boot, read when it reported: with the pid, its identity. */
  startTime: string;
  /** The pids of its children, in plan order. */
  children: number[];
}

/** The harness writes its report file once it has started every child, then idles until killed. */
const HARNESS_JS = `const { spawn } = require("node:child_process");
const { renameSync, writeFileSync } = require("node:fs");
const plans = JSON.parse(process.argv[2]);
const report = process.argv[3];
const children = plans.map((p) => {
  const c = spawn(p.argv[0], p.argv.slice(1), { stdio: "ignore", detached: Boolean(p.setsid) });
  c.on("error", () => {});
  return c.pid ?? null;
});
writeFileSync(report + ".tmp", JSON.stringify({ pid: process.pid, children }));
renameSync(report + ".tmp", report);
setInterval(() => {}, 60000);
`;

/** An MCP server stand-in: idles like a stdio server; with --with-child it starts a helper of its own. */
const SERVER_JS = `#!/usr/bin/env node
if (process.argv.includes("--with-child")) require("node:child_process").spawn("sleep", ["300"], { stdio: "ignore" });
setInterval(() => {}, 60000);
`;

/** Files every census scenario uses, under `<runDir>/census`. */
export interface CensusFiles {
  root: string;
  harnessJs: string;
  /** A folder for the harness's PATH: `fake-mcp` (executable, `#!/usr/bin/env node`), `server.js`, `reexec-mcp`. */
  bin: string;
}

export function writeCensusFiles(runDir: string): CensusFiles {
  const root = join(runDir, "census");
  const bin = join(root, "bin");
  mkdirSync(bin, { recursive: true });
  // The run dir lies inside the project, whose package.json says "module": the extensionless server scripts must be CommonJS.
  writeFileSync(join(root, "package.json"), '{"type":"commonjs"}');
  const harnessJs = join(root, "fake-harness.cjs");
  writeFileSync(harnessJs, HARNESS_JS);
  writeFileSync(join(bin, "fake-mcp"), SERVER_JS);
  chmodSync(join(bin, "fake-mcp"), 0o755);
  writeFileSync(join(bin, "server.js"), SERVER_JS);
  // A server that replaces itself with another program: its argv no longer says it is the server.
  writeFileSync(join(bin, "reexec-mcp"), "#!/bin/sh\nexec sleep 300\n");
  chmodSync(join(bin, "reexec-mcp"), 0o755);
  return { root, harnessJs, bin };
}

let harnessCount = 0;

/**
 * Starts the stand-in harness and waits (bounded) for its report.
 * `detached` (default true) gives it a process group of its own, as a
 * daemon spawns a harness; `prefix` runs it as `sh -c '<prefix>; exec node …'`
 * (no single quotes in it); `orphaned` starts it (in a session of its own)
 * from a shell that exits at once, so its parent is not this process.
 */
export async function startFakeHarness(
  ctx: ScenarioContext,
  files: CensusFiles,
  children: ChildPlan[],
  options: { cwd: string; env: NodeJS.ProcessEnv; detached?: boolean; prefix?: string; orphaned?: boolean; started: Set<number> },
): Promise<FakeHarness> {
  const report = join(files.root, `harness-${++harnessCount}.json`);
  const node = process.execPath;
  const tail = [node, files.harnessJs, JSON.stringify(children), report];
  let script = options.prefix ? `${options.prefix}\nexec "$0" "$@"` : null;
  // A background job of a non-interactive shell is no group leader, so setsid(1) needs no fork: the pid stays the harness's.
  if (options.orphaned) script = `setsid /bin/sh -c '${script ?? 'exec "$0" "$@"'}' "$0" "$@" </dev/null >/dev/null 2>&1 &`;
  const [cmd, args] = script === null ? [node, tail.slice(1)] : ["/bin/sh", ["-c", script, ...tail]];
  const child = spawn(cmd, args, { cwd: options.cwd, env: options.env, detached: options.detached ?? true, stdio: "ignore" });
  child.on("error", () => {});
  if (child.pid) options.started.add(child.pid);
  const seen = await ctx.waitFor("the harness to start its children", () => existsSync(report) && readFileSync(report, "utf8"), 10_000);
  const { pid, children: kids } = JSON.parse(seen) as { pid: number; children: number[] };
  options.started.add(pid);
  for (const k of kids) options.started.add(k);
  return { pid, startTime: readProcStat(pid)!.startTime, children: kids };
}

/** The pid a shell wrote with `echo $! > path`, once the whole line is there; null before. */
export function writtenPid(path: string): number | null {
  try {
    const text = readFileSync(path, "utf8");
    return text.endsWith("\n") ? Number(text) : null;
  } catch {
    return null;
  }
}

/** The live process `pid` as the census sees it now (argv included), or undefined. */
export async function processNow(pid: number): Promise<CensusProcess | undefined> {
  return (await takeSnapshot()).processes.find((p) => p.pid === pid && p.state !== "Z");
}

/** Waits until `pid` runs `argv` exactly: an exec through `/usr/bin/env` or a shell script has finished. */
export async function waitForArgv(ctx: ScenarioContext, pid: number, argv: readonly string[]): Promise<void> {
  const want = JSON.stringify(argv);
  await ctx.waitFor(`pid ${pid} to run ${want}`, async () => JSON.stringify((await processNow(pid))?.argv) === want, 10_000);
}

/**
 * Ends by pid every process a scenario started and everything the census
 * finds under each (children, group members), then waits until all have
 * exited. A process that left both the tree and the group must be in
 * `started` itself: nothing else can find it.
 */
export async function endStarted(ctx: ScenarioContext, started: Set<number>): Promise<void> {
  const pids = new Set(started);
  const snapshot = await takeSnapshot();
  for (const pid of started) {
    const under = underLeader(snapshot, { pid }, {});
    if (under.ok) for (const m of under.census.members) pids.add(m.process.pid);
  }
  pids.delete(process.pid);
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  await ctx.waitFor("every started process to end", () => [...pids].every((pid) => !isRunning(pid)), 10_000).catch((e) => {
    ctx.check("every process the scenario started has ended", false, { error: (e as Error).message, left: [...pids].filter(isRunning) });
  });
}

/** What a census scenario's body gets: its files, and a set to put the pid of everything it starts in. */
export interface CensusRun {
  files: CensusFiles;
  started: Set<number>;
}

/**
 * Runs a census scenario's body with its files written; whatever the body
 * does, ends by pid everything it started (see `endStarted`), then checks
 * that no unit is left.
 */
export async function censusRun(ctx: ScenarioContext, body: (run: CensusRun) => Promise<void>): Promise<void> {
  const run = { files: writeCensusFiles(ctx.runDir), started: new Set<number>() };
  try {
    await body(run);
  } finally {
    await endStarted(ctx, run.started);
  }
  ctx.check("no units left", (await ctx.units()).length === 0, await ctx.units());
}

/** What `outlive census PID --json` printed (or why it printed nothing usable), and its exit code. */
export interface CliCensus {
  exitCode: number | null;
  // deno-lint-ignore no-explicit-any
  json: Record<string, any> | null;
  decision: IdleDecision | null;
  stderr: string;
}

/** Runs `outlive census PID --json ARGS…` from dist, bounded. */
export async function cliCensus(pid: number, args: string[] = []): Promise<CliCensus> {
  const r = await $({ nothrow: true, quiet: true, timeout: "20s" })`node ${join(projectRoot(), "dist/scripts/outlive.js")} census ${pid} --json ${args}`;
  let json = null;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    // Left null: the check that uses it fails with stderr in its detail.
  }
  return { exitCode: r.exitCode, json, decision: json?.decision ?? null, stderr: r.stderr };
}

/** A short, JSON-friendly view of a decision for check details. */
export function brief(d: IdleDecision | null | undefined): unknown {
  if (!d) return d;
  if (d.verdict === "retire") return { verdict: "retire", servers: d.servers };
  return d.blocking ? { verdict: "keep", blocking: d.blocking } : { verdict: "keep", reason: d.reason };
}
