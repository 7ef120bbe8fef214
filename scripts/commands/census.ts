import { readFileSync, readlinkSync } from "node:fs";
import { EXIT, wantsJson } from "../cli/exit-codes.ts";
import { parseFlags } from "../cli/flags.ts";
import {
  classifyMembers,
  decideIdle,
  outliveProcess,
  outliveProcessTitle,
  readLaunchRecord,
  takeCensus,
  type CgroupChoice,
  type ClassifiedMember,
  type IdleDecision,
  type LaunchInputs,
  type LaunchRecord,
  type OutliveProcess,
} from "../../lib/census/mod.ts";

const USAGE = `Usage: outlive census PID [options]

Lists every process under PID (by parent chain, its process group even
when reparented to init, and its own cgroup even after setsid and a double
fork), with why each is included and which sources were used. With launch inputs,
also says whether the harness PID may be ended while idle.

Options:
  --json                    Print one JSON object instead of a table.
  --cgroup auto|PATH|none   The cgroup source: auto (default) takes PID's cgroup
                            exactly when it is an outlive task's; PATH names one
                            (as /proc/PID/cgroup writes it, or its folder); none
                            leaves it out. A shared cgroup (the root, a session,
                            a slice, this command's own) is never taken.
  --start-time TICKS        The start time recorded for PID; a different one gives no answer.
  --mcp-config FILE|JSON    A Claude Code --mcp-config value (repeatable).
  --strict-mcp-config       Only the --mcp-config servers, as Claude Code would.
  --codex                   Read Codex's config.toml instead of Claude Code's configs.
  --cwd DIR                 The harness's folder (default: PID's own, else this one).
  --adopted                 Decide as for a harness with no launch record.
  --timeout-ms MS           Time bound for reading configs (default 3000).
  -h, --help                Show this help.

The configs are read now, with PID's environment where /proc shows it; a
daemon reads them just before the spawn instead, so an edit made since
the harness started may give a different answer here.

Exit status: 0 listed, 1 the census could not answer, 2 usage error.`;

/** Where the command writes; tests pass their own. */
export interface CommandIO {
  out: (text: string) => void;
  err: (text: string) => void;
}

const defaultIO: CommandIO = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

/**
 * `outlive census PID [--json] [--mcp-config …] [--cwd DIR] [--strict-mcp-config] [--codex]`.
 *
 * @example
 * ```ts
 * import { censusCommand } from "./census.ts";
 * process.exitCode = await censusCommand([String(process.pid), "--json"]);
 * ```
 */
export async function censusCommand(args: string[], io: CommandIO = defaultIO): Promise<number> {
  let parsed;
  try {
    parsed = parseFlags(args, {
      json: { type: "boolean" },
      "start-time": { type: "string" },
      cgroup: { type: "string" },
      "mcp-config": { type: "string", multiple: true },
      "strict-mcp-config": { type: "boolean" },
      codex: { type: "boolean" },
      cwd: { type: "string" },
      adopted: { type: "boolean" },
      "timeout-ms": { type: "string" },
      help: { type: "boolean", short: "h" },
    });
  } catch (error) {
    // usage() points to --help itself.
    return usage(io, args, (error as Error).message.replace(/ \(see --help\)$/, ""));
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(USAGE + "\n");
    return 0;
  }
  if (positionals.length !== 1) return usage(io, args, `expected exactly one PID, got ${positionals.length}`);
  const pid = Number(positionals[0]);
  if (!/^\d+$/.test(positionals[0]) || !Number.isSafeInteger(pid) || pid < 1) return usage(io, args, `PID must be a positive integer, got ${JSON.stringify(positionals[0])}`);
  const startTime = values["start-time"];
  if (startTime !== undefined && !/^\d+$/.test(startTime)) return usage(io, args, `--start-time must be clock ticks (digits), got ${JSON.stringify(startTime)}`);
  const cgroupValue = values.cgroup ?? "auto";
  if (cgroupValue !== "auto" && cgroupValue !== "none" && !cgroupValue.startsWith("/")) {
    return usage(io, args, `--cgroup must be auto, none or an absolute cgroup path, got ${JSON.stringify(cgroupValue)}`);
  }
  const cgroup: CgroupChoice = cgroupValue === "auto" || cgroupValue === "none" ? cgroupValue : { path: cgroupValue };
  const timeoutMs = values["timeout-ms"] === undefined ? 3_000 : Number(values["timeout-ms"]);
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0) return usage(io, args, `--timeout-ms must be a non-negative number, got ${JSON.stringify(values["timeout-ms"])}`);
  if (values.codex && (values["mcp-config"] || values["strict-mcp-config"])) return usage(io, args, "--codex cannot be combined with Claude Code's --mcp-config or --strict-mcp-config");

  const wantsDecision = Boolean(values.adopted || values.codex || values.cwd || values["mcp-config"] || values["strict-mcp-config"]);
  let record: LaunchRecord | null = null;
  if (wantsDecision && !values.adopted) {
    const argv = ["claude", ...(values["strict-mcp-config"] ? ["--strict-mcp-config"] : []), ...(values["mcp-config"] ?? []).map((c) => `--mcp-config=${c}`)];
    const inputs: LaunchInputs = {
      agent: values.codex ? "codex" : "claude-code",
      argv,
      cwd: values.cwd ?? procCwd(pid) ?? process.cwd(),
      env: procEnv(pid) ?? process.env,
    };
    record = await readLaunchRecord(inputs, { timeoutMs });
  }

  const result = await takeCensus({ pid, startTime }, { cgroup });
  const decision = wantsDecision ? decideIdle(result, record) : null;
  if (!result.ok) {
    if (values.json) io.out(JSON.stringify({ ok: false, error: result.error, decision }, null, 2) + "\n");
    else io.err(`outlive census: no answer for pid ${pid}: ${result.error.message} (${result.error.code})\n`);
    return 1;
  }
  const members = classifyMembers(result.census, record?.servers ?? []);
  const ours = outliveProcesses(result.census.leader, members);
  if (values.json) {
    const { leader, groupTaken, sources } = result.census;
    const json = { ...leader, ...withOutlive(ours, leader.pid) };
    io.out(JSON.stringify({ ok: true, source: result.census.exactArgv ? "proc" : "ps", sources, leader: json, groupTaken, members: members.map((m) => memberJson(m, ours)), launchRecord: record, decision }, null, 2) + "\n");
    return 0;
  }
  io.out(table(result.census.leader, members, result.census.groupTaken, record !== null, ours));
  io.out(sourcesLine(result.census.sources) + "\n");
  if (record) for (const note of record.notes) io.out(`note: ${note.message} (${note.code})\n`);
  if (decision) io.out(decisionLine(decision, ours) + "\n");
  return 0;
}

/** A usage error, exit 2: one line, or with --json the one JSON object every command gives. */
function usage(io: CommandIO, args: string[], message: string): number {
  const text = message.replace(/\s+/g, " ");
  if (wantsJson(args)) io.err(`${JSON.stringify({ error: { code: "E_USAGE", message: text, exitCode: EXIT.usage } })}\n`);
  else io.err(`outlive census: ${text} (try --help)\n`);
  return EXIT.usage;
}

type OutliveProcesses = Map<number, OutliveProcess>;

/** outlive's own processes among those listed (wrapper, warden, PTY holder), by pid. */
function outliveProcesses(leader: ClassifiedMember["process"], members: ClassifiedMember[]): OutliveProcesses {
  const listed = [leader, ...members.map((m) => m.process)];
  const byPid = new Map(listed.map((p) => [p.pid, p]));
  const ours: OutliveProcesses = new Map();
  for (const p of listed) {
    const o = outliveProcess(p, byPid.get(p.ppid));
    if (o) ours.set(p.pid, o);
  }
  return ours;
}

/** `{ outlive: { role, taskId } }` for one of outlive's own processes; its argv stays whole beside it. */
function withOutlive(ours: OutliveProcesses, pid: number) {
  const o = ours.get(pid);
  return o ? { outlive: o } : {};
}

function memberJson(m: ClassifiedMember, ours: OutliveProcesses) {
  const { pid, ppid, pgid, sid, state, argv, name } = m.process;
  return { pid, ppid, pgid, sid, state, argv, name, ...withOutlive(ours, pid), why: m.why, role: m.role };
}

function table(leader: ClassifiedMember["process"], members: ClassifiedMember[], groupTaken: boolean, withRoles: boolean, ours: OutliveProcesses): string {
  // outlive's wrapper, warden and holder read as one short line, never as their script (several KB of shell).
  const show = (p: ClassifiedMember["process"]) => {
    const o = ours.get(p.pid);
    return o ? outliveProcessTitle(o) : showArgv(p);
  };
  const depth = new Map<number, number>([[leader.pid, 0]]);
  const lines = [`${"PID".padStart(7)} ${"PGID".padStart(7)} S  ${"WHY".padEnd(13)} ${withRoles ? "ROLE".padEnd(18) + " " : ""}ARGV`];
  const row = (pid: number, pgid: number, state: string, why: string, role: string, argv: string, level: number) =>
    `${String(pid).padStart(7)} ${String(pgid).padStart(7)} ${state.padEnd(2)} ${why.padEnd(13)} ${withRoles ? role.padEnd(18) + " " : ""}${"  ".repeat(level)}${argv}`;
  lines.push(row(leader.pid, leader.pgid, leader.state, "leader", "", show(leader), 0));
  for (const m of members) {
    const level = m.why !== "child-chain" ? 1 : (depth.get(m.process.ppid) ?? 0) + 1;
    depth.set(m.process.pid, level);
    lines.push(row(m.process.pid, m.process.pgid, m.process.state, m.why, roleText(m), show(m.process), level));
  }
  if (!groupTaken) lines.push(`(pid ${leader.pid} shares this command's process group ${leader.pgid}; group members were not taken)`);
  return lines.join("\n") + "\n";
}

function sourcesLine(s: import("../../lib/census/mod.ts").CensusSources): string {
  const used = ["parent chain", ...(s.processGroup ? ["process group"] : []), ...(s.cgroup ? [`cgroup ${s.cgroup}`] : [])];
  const notes = [
    ...(s.cgroup === null && s.cgroupNote ? [`no cgroup: ${s.cgroupNote}`] : []),
    ...(s.notUnder.length > 0 ? [`not under PID: ${s.notUnder.join(", ")} (its ancestors in its group or cgroup, and their forks)`] : []),
  ];
  return `sources: ${used.join(", ")}${notes.length ? `; ${notes.join("; ")}` : ""}`;
}

function roleText(m: ClassifiedMember): string {
  if (m.role.kind === "server") return `server ${m.role.server}`;
  if (m.role.kind === "servers-own") return `under ${m.role.server}`;
  return "unclaimed";
}

function showArgv(p: { argv: readonly string[]; name: string }): string {
  return p.argv.length === 0 ? `[${p.name}]` : p.argv.map((a) => (a === "" || /[\s"'\\$]/.test(a) ? JSON.stringify(a) : a)).join(" ");
}

function decisionLine(d: IdleDecision, ours: OutliveProcesses): string {
  if (d.verdict === "retire") return `decision: retire (${d.servers.length} MCP server${d.servers.length === 1 ? "" : "s"}, nothing else runs under it)`;
  if (d.blocking) return `decision: keep: pid ${d.blocking.pid} runs ${ours.has(d.blocking.pid) ? outliveProcessTitle(ours.get(d.blocking.pid)!) : showArgv(d.blocking)} (${d.blocking.why})`;
  return `decision: keep: ${d.reason.message} (${d.reason.code})`;
}

function procCwd(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return null;
  }
}

function procEnv(pid: number): Record<string, string> | null {
  try {
    const env: Record<string, string> = {};
    for (const entry of readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")) {
      const eq = entry.indexOf("=");
      if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
    }
    return env;
  } catch {
    return null;
  }
}
