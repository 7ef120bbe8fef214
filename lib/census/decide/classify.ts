import type { LaunchServer } from "../agent-config/launch-record.ts";
import { isInterpreter } from "../recognise/interpreter-name.ts";
import { argvIsNpxTitle } from "../recognise/launcher-title.ts";
import { DEFAULT_INTERPRETERS } from "../agent-config/server-spec.ts";
import type { LeaderCensus, CensusMember } from "./under-leader.ts";

/** What a process under the leader is, as far as retiring the leader goes. */
export type CensusRole =
  /** A direct child whose argv is exactly a configured server's. */
  | { kind: "server"; server: string }
  /** Below a server by parent chain: the server's own business. */
  | { kind: "servers-own"; server: string; serverPid: number }
  /** Anything else: real work the leader must not be ended under. */
  | { kind: "unclaimed" };

export interface ClassifiedMember extends CensusMember {
  role: CensusRole;
}

/**
 * True when `argv` runs `server`: its program (in any recorded form), or a
 * listed interpreter (versioned names too: `python3.11`) running that
 * program as a script, followed by exactly the configured args; or, for
 * `npx`, npm's rewritten process title for exactly those args. A launcher
 * (`npx`, `uvx`, `bunx`, `pipx run`) is matched as the config writes it,
 * and what it starts is the server's own by parent chain.
 *
 * @example
 * ```ts
 * import { argvRunsServer } from "./classify.ts";
 * const s = { name: "fs", source: "x", command: "srv", args: ["--stdio"], programs: ["srv", "/usr/bin/srv"] };
 * console.log(argvRunsServer(["node", "/usr/bin/srv", "--stdio"], s)); // true
 * console.log(argvRunsServer(["node", "/usr/bin/srv", "--stdio", "x"], s)); // false
 * console.log(argvRunsServer(["node", "--", "/usr/bin/srv", "--stdio"], s)); // true: a `#!/usr/bin/env -S node --` script
 * ```
 */
export function argvRunsServer(argv: readonly string[], server: LaunchServer, interpreters: readonly string[] = DEFAULT_INTERPRETERS): boolean {
  if (argv.length === 0) return false;
  if (server.programs.includes(argv[0]) && sameArgs(argv, 1, server.args)) return true;
  if (argv.length >= 2 && isInterpreter(argv[0], interpreters)) {
    // A script whose shebang ends the interpreter's options (`#!/usr/bin/env -S node --`, as outlive's own) has `--` first.
    for (const at of argv[1] === "--" ? [1, 2] : [1]) {
      if (argv.length > at && server.programs.includes(argv[at]) && sameArgs(argv, at + 1, server.args)) return true;
    }
  }
  return argvIsNpxTitle(argv, server);
}

function sameArgs(argv: readonly string[], from: number, args: readonly string[]): boolean {
  if (argv.length - from !== args.length) return false;
  for (let i = 0; i < args.length; i++) if (argv[from + i] !== args[i]) return false;
  return true;
}

/**
 * Gives every process under the leader its role. Only a direct child of the
 * leader can be a server; anything whose parent chain reaches a server is
 * the server's. Where argv is not exact (the `ps` fallback), nothing is
 * taken for a server, because a joined command line can be forged by an
 * argument that holds spaces.
 *
 * @example
 * ```ts
 * import { classifyMembers } from "./classify.ts";
 * const p = (pid: number, ppid: number, argv: string[]) => ({ pid, ppid, pgid: 10, sid: 1, state: "S", startTime: "1", argv, name: "" });
 * const census = { leader: p(10, 1, ["claude"]), groupTaken: true, exactArgv: true, members: [
 *   { process: p(11, 10, ["srv"]), why: "child-chain" as const },
 *   { process: p(12, 11, ["helper"]), why: "child-chain" as const },
 *   { process: p(13, 10, ["npm", "run", "dev"]), why: "child-chain" as const }] };
 * const servers = [{ name: "s", source: "x", command: "srv", args: [], programs: ["srv"] }];
 * console.log(classifyMembers(census, servers).map((m) => m.role.kind)); // ["server", "servers-own", "unclaimed"]
 * ```
 */
export function classifyMembers(
  census: LeaderCensus,
  servers: readonly LaunchServer[],
  interpreters: readonly string[] = DEFAULT_INTERPRETERS,
): ClassifiedMember[] {
  const leaderPid = census.leader.pid;
  const parentOf = new Map<number, number>();
  for (const m of census.members) parentOf.set(m.process.pid, m.process.ppid);
  const serverAt = new Map<number, string>();
  if (census.exactArgv) {
    for (const m of census.members) {
      if (m.process.ppid !== leaderPid) continue;
      const match = servers.find((s) => argvRunsServer(m.process.argv, s, interpreters));
      if (match) serverAt.set(m.process.pid, match.name);
    }
  }
  return census.members.map((m) => {
    const own = serverAt.get(m.process.pid);
    if (own !== undefined) return { ...m, role: { kind: "server", server: own } };
    // Walk up within the census only: a parent outside it (init, the caller) ends the chain.
    let pid = m.process.ppid;
    const seen = new Set<number>();
    while (parentOf.has(pid) && !seen.has(pid)) {
      const server = serverAt.get(pid);
      if (server !== undefined) return { ...m, role: { kind: "servers-own", server, serverPid: pid } };
      seen.add(pid);
      pid = parentOf.get(pid)!;
    }
    return { ...m, role: { kind: "unclaimed" } };
  });
}
