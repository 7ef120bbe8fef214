import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  argvRunsServer,
  checkServerSpec,
  classifyMembers,
  decideIdle,
  DEFAULT_INTERPRETERS,
  type CensusProcess,
  type LaunchRecord,
  type LaunchServer,
  type LeaderCensus,
} from "../../lib/census/mod.ts";

const server = (name: string, command: string, args: string[], programs = [command]): LaunchServer => ({ name, source: "test", command, args, programs });
const p = (pid: number, ppid: number, argv: string[], state = "S"): CensusProcess => ({ pid, ppid, pgid: 10, sid: 1, state, startTime: "1", argv, name: argv[0] ?? "" });
const census = (members: [CensusProcess, "child-chain" | "group-member"][], exactArgv = true): LeaderCensus => ({
  leader: p(10, 1, ["claude"]),
  members: members.map(([process, why]) => ({ process, why })),
  groupTaken: true,
  exactArgv,
  sources: { parentChain: true, processGroup: true, cgroup: null, notUnder: [] },
});
const record = (servers: LaunchServer[]): LaunchRecord => ({ known: true, servers, notes: [], readAt: "2026-01-01T00:00:00.000Z" });

describe("argvRunsServer", () => {
  const s = server("fs", "fs-mcp", ["--root", "/srv"], ["fs-mcp", "/usr/local/bin/fs-mcp"]);

  it("matches the program in any recorded form, or an interpreter running it, with exactly the args", () => {
    expect(argvRunsServer(["fs-mcp", "--root", "/srv"], s)).toBe(true);
    expect(argvRunsServer(["/usr/local/bin/fs-mcp", "--root", "/srv"], s)).toBe(true);
    expect(argvRunsServer(["node", "/usr/local/bin/fs-mcp", "--root", "/srv"], s)).toBe(true);
    expect(argvRunsServer(["/usr/bin/python", "fs-mcp", "--root", "/srv"], s)).toBe(true);
  });

  it("refuses other paths, unlisted interpreters, interpreter options, and any other args", () => {
    expect(argvRunsServer(["/opt/fs-mcp", "--root", "/srv"], s)).toBe(false);
    expect(argvRunsServer(["java", "fs-mcp", "--root", "/srv"], s)).toBe(false);
    expect(argvRunsServer(["python3-config", "fs-mcp", "--root", "/srv"], s)).toBe(false);
    expect(argvRunsServer(["node", "--inspect", "fs-mcp", "--root", "/srv"], s)).toBe(false);
    expect(argvRunsServer(["fs-mcp", "--root"], s)).toBe(false);
    expect(argvRunsServer(["fs-mcp", "--root", "/srv", "--extra"], s)).toBe(false);
    expect(argvRunsServer(["fs-mcp", "--root /srv"], s)).toBe(false);
    expect(argvRunsServer([], s)).toBe(false);
  });

  const part = fc.stringMatching(/^[A-Za-z0-9_./=-]{1,10}$/);
  it("holds for any program and args: exact matches, and one change breaks it (property)", () => {
    fc.assert(
      fc.property(part, fc.array(part, { maxLength: 5 }), fc.constantFrom(...DEFAULT_INTERPRETERS), part, (command, args, interp, extra) => {
        const srv = server("x", command, args);
        expect(argvRunsServer([command, ...args], srv)).toBe(true);
        expect(argvRunsServer([`/usr/bin/${interp}`, command, ...args], srv)).toBe(true);
        expect(argvRunsServer([command, ...args, extra], srv)).toBe(false);
        if (args.length > 0) expect(argvRunsServer([command, ...args.slice(0, -1)], srv)).toBe(false);
        if (!srv.programs.includes(extra)) expect(argvRunsServer([extra, ...args], srv)).toBe(false);
      }),
    );
  });
});

describe("checkServerSpec", () => {
  it("never accepts an empty, whitespace-holding or non-string part, nor a bare interpreter (property)", () => {
    const bad = fc.oneof(fc.constant(""), fc.string().map((s) => `${s} ${s}`), fc.string().map((s) => `\t${s}`), fc.integer(), fc.boolean(), fc.constant(null), fc.object());
    fc.assert(
      fc.property(bad, fc.array(fc.stringMatching(/^\S+$/), { maxLength: 3 }), fc.nat(3), (badPart, args, at) => {
        expect(checkServerSpec("x", "t", { command: badPart, args }).ok).toBe(false);
        const withBad = [...args];
        withBad.splice(Math.min(at, args.length), 0, badPart as string);
        expect(checkServerSpec("x", "t", { command: "srv", args: withBad }).ok).toBe(false);
      }),
    );
    for (const interp of DEFAULT_INTERPRETERS) {
      expect(checkServerSpec("x", "t", { command: interp }).ok).toBe(false);
      expect(checkServerSpec("x", "t", { command: `/usr/bin/${interp}`, args: [] }).ok).toBe(false);
      expect(checkServerSpec("x", "t", { command: interp, args: ["script.js"] }).ok).toBe(true);
    }
  });
});

describe("classifyMembers", () => {
  const srv = server("s", "srv", ["--stdio"]);

  it("makes only a direct child a server, and everything under it the server's", () => {
    const c = census([
      [p(11, 10, ["srv", "--stdio"]), "child-chain"],
      [p(12, 11, ["helper"]), "child-chain"],
      [p(13, 12, ["deeper"]), "child-chain"],
      [p(14, 10, ["sh", "-c", "x"]), "child-chain"],
      [p(15, 14, ["srv", "--stdio"]), "child-chain"],
      [p(16, 1, ["srv", "--stdio"]), "group-member"],
    ]);
    expect(classifyMembers(c, [srv]).map((m) => m.role)).toEqual([
      { kind: "server", server: "s" },
      { kind: "servers-own", server: "s", serverPid: 11 },
      { kind: "servers-own", server: "s", serverPid: 11 },
      { kind: "unclaimed" },
      { kind: "unclaimed" },
      { kind: "unclaimed" },
    ]);
  });

  it("takes nothing for a server when argv is not exact (the ps fallback)", () => {
    const c = census([[p(11, 10, ["srv", "--stdio"]), "child-chain"]], false);
    expect(classifyMembers(c, [srv])[0].role.kind).toBe("unclaimed");
  });
});

describe("decideIdle", () => {
  const srv = server("s", "srv", []);

  it("retires when every process is a server or the server's", () => {
    const c = census([
      [p(11, 10, ["srv"]), "child-chain"],
      [p(12, 11, ["x"]), "child-chain"],
    ]);
    expect(decideIdle({ ok: true, census: c }, record([srv]))).toEqual({ verdict: "retire", servers: [{ pid: 11, server: "s" }] });
  });

  it("keeps, naming the first real process in tree order", () => {
    const c = census([
      [p(11, 10, ["srv"]), "child-chain"],
      [p(12, 10, ["npm", "run", "dev"]), "child-chain"],
      [p(13, 12, ["vite"]), "child-chain"],
    ]);
    expect(decideIdle({ ok: true, census: c }, record([srv]))).toEqual({
      verdict: "keep",
      blocking: { pid: 12, argv: ["npm", "run", "dev"], name: "npm", why: "child-chain" },
    });
  });

  it("for an adopted harness, retires only when nothing runs under it", () => {
    expect(decideIdle({ ok: true, census: census([]) }, null).verdict).toBe("retire");
    expect(decideIdle({ ok: true, census: census([[p(11, 10, ["srv"]), "child-chain"]]) }, null).verdict).toBe("keep");
  });

  it("keeps with the reason when the census or the record cannot answer", () => {
    const error = { code: "leader-missing" as const, message: "pid 10 is not running" };
    expect(decideIdle({ ok: false, error }, record([srv]))).toEqual({ verdict: "keep", reason: error });
    const unknown: LaunchRecord = { ...record([]), known: false, notes: [{ code: "launch-record-unknown", message: "too slow" }] };
    expect(decideIdle({ ok: true, census: census([]) }, unknown)).toMatchObject({ verdict: "keep", reason: { code: "launch-record-unknown", message: "too slow" } });
  });

  it("never retires while an unclaimed process is present (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }), fc.nat(7), (isServer, realAt) => {
        const members: [CensusProcess, "child-chain"][] = isServer.map((s, i) => [p(11 + i, 10, s ? ["srv"] : ["work"]), "child-chain"]);
        members[realAt % members.length] = [p(11 + (realAt % members.length), 10, ["work"]), "child-chain"];
        const d = decideIdle({ ok: true, census: census(members) }, record([srv]));
        expect(d.verdict).toBe("keep");
        expect(d.blocking?.argv).toEqual(["work"]);
      }),
    );
  });
});
