import { describe, expect, it } from "vitest";
import { argvRunsServer, checkServerSpec, classifyMembers, isInterpreter, npxTitle, type CensusProcess, type LaunchServer } from "../../lib/census/mod.ts";

const server = (command: string, args: string[], programs = [command]): LaunchServer => ({ name: "s", source: "test", command, args, programs });

describe("isInterpreter: versioned names count, look-alikes do not", () => {
  const table: [string, boolean][] = [
    ["python", true],
    ["python3", true],
    ["/usr/bin/python3.11", true],
    ["python3.12.1", true],
    ["node", true],
    ["node20", true],
    ["/usr/local/bin/node22", true],
    ["ruby3.1", true],
    ["perl5.36.0", true],
    ["bash", true],
    ["python3-config", false],
    ["python3.", false],
    ["python3.x", false],
    ["pythonw", false],
    ["nodemon", false],
    ["node_exporter", false],
    ["node-20", false],
    ["shellcheck", false],
    ["curl", false],
    ["", false],
  ];
  for (const [name, expected] of table) it(`${JSON.stringify(name)} → ${expected}`, () => expect(isInterpreter(name, ["node", "python", "ruby", "perl", "bash", "sh"])).toBe(expected));
});

describe("argvRunsServer through versioned interpreters", () => {
  const s = server("srv.py", ["--stdio"], ["srv.py", "/opt/srv.py"]);
  const table: [string[], boolean][] = [
    [["python3", "/opt/srv.py", "--stdio"], true],
    [["/usr/bin/python3.11", "/opt/srv.py", "--stdio"], true],
    [["node20", "srv.py", "--stdio"], true],
    [["python3", "-u", "/opt/srv.py", "--stdio"], false],
    [["python3-config", "/opt/srv.py", "--stdio"], false],
    [["python3", "/opt/srv.py"], false],
  ];
  for (const [argv, expected] of table) it(`${argv.join(" ")} → ${expected}`, () => expect(argvRunsServer(argv, s)).toBe(expected));
  it("a bare versioned interpreter is never a server", () => {
    expect(checkServerSpec("x", ".mcp.json", { command: "python3.11" }).ok).toBe(false);
    expect(checkServerSpec("x", ".mcp.json", { command: "/usr/bin/node20", args: [] }).ok).toBe(false);
  });
});

describe("launchers as the field's configs write them", () => {
  // Each row: the config (command, args, the program forms a PATH lookup gave), a process's argv, and whether it is that server.
  const npx = server("npx", ["-y", "@modelcontextprotocol/server-memory"], ["npx", "/usr/bin/npx"]);
  const npxArgs = server("npx", ["-y", "@scope/srv", "--root", "/srv"], ["npx", "/usr/bin/npx"]);
  const npxPackage = server("npx", ["-p", "@scope/srv", "srv"], ["npx", "/usr/bin/npx"]);
  const uvx = server("uvx", ["mcp-server-fetch"], ["uvx", "/root/.local/bin/uvx"]);
  const uvxFrom = server("uvx", ["--from", "git-mcp", "mcp-git"], ["uvx"]);
  const bunx = server("bunx", ["@scope/srv"], ["bunx", "/usr/local/bin/bunx"]);
  const pipx = server("pipx", ["run", "mcp-server-time"], ["pipx", "/usr/bin/pipx"]);
  const table: [string, LaunchServer, string[], boolean][] = [
    ["npx exact", npx, ["npx", "-y", "@modelcontextprotocol/server-memory"], true],
    ["npx through node (its shebang)", npx, ["node", "/usr/bin/npx", "-y", "@modelcontextprotocol/server-memory"], true],
    ["npx as npm retitles it", npx, ["npm exec @modelcontextprotocol/server-memory", "", "", ""], true],
    ["npm's title with the server's args", npxArgs, ["npm exec @scope/srv --root /srv", ""], true],
    ["npm's title of another package", npx, ["npm exec @modelcontextprotocol/server-everything", ""], false],
    ["npm's title with more after it", npx, ["npm exec @modelcontextprotocol/server-memory", "x"], false],
    ["npm's title with an extra arg", npx, ["npm exec @modelcontextprotocol/server-memory --x"], false],
    ["npx with other args", npx, ["npx", "-y", "@modelcontextprotocol/server-memory", "--x"], false],
    ["npx without -y", npx, ["npx", "@modelcontextprotocol/server-memory"], false],
    ["npx -p has no knowable title", npxPackage, ["npm exec srv", ""], false],
    ["npx -p exact", npxPackage, ["npx", "-p", "@scope/srv", "srv"], true],
    ["uvx exact", uvx, ["uvx", "mcp-server-fetch"], true],
    ["uvx by its PATH form", uvx, ["/root/.local/bin/uvx", "mcp-server-fetch"], true],
    ["uvx with other args", uvx, ["uvx", "mcp-server-fetch", "--x"], false],
    ["uvx --from exact", uvxFrom, ["uvx", "--from", "git-mcp", "mcp-git"], true],
    ["uvx --from as another tool", uvxFrom, ["uvx", "mcp-git"], false],
    ["bunx exact", bunx, ["bunx", "@scope/srv"], true],
    ["bunx by path", bunx, ["/usr/local/bin/bunx", "@scope/srv"], true],
    ["bunx another package", bunx, ["bunx", "@scope/other"], false],
    ["pipx run through python3 (its shebang)", pipx, ["/usr/bin/python3", "/usr/bin/pipx", "run", "mcp-server-time"], true],
    ["pipx run exact", pipx, ["pipx", "run", "mcp-server-time"], true],
    ["pipx without run", pipx, ["pipx", "mcp-server-time"], false],
    ["pipx run through python3 -I (an option)", pipx, ["/usr/bin/python3", "-I", "/usr/bin/pipx", "run", "mcp-server-time"], false],
  ];
  for (const [label, s, argv, expected] of table) it(`${label} → ${expected}`, () => expect(argvRunsServer(argv, s)).toBe(expected));

  it("npm's title is known only for npx's plain switches", () => {
    expect(npxTitle(server("npx", ["--yes", "-q", "pkg", "a"]))).toBe("npm exec pkg a");
    expect(npxTitle(server("npx", ["-y"]))).toBe(null);
    expect(npxTitle(server("npx", ["--package=x", "y"]))).toBe(null);
    expect(npxTitle(server("npx", ["-c", "srv"]))).toBe(null);
    expect(npxTitle(server("uvx", ["pkg"]))).toBe(null);
  });

  it("what runs under a launcher is the server's own", () => {
    const p = (pid: number, ppid: number, argv: string[]): CensusProcess => ({ pid, ppid, pgid: 10, sid: 1, state: "S", startTime: "1", argv, name: "" });
    const census = {
      leader: p(10, 1, ["claude"]),
      groupTaken: true,
      exactArgv: true,
      sources: { parentChain: true as const, processGroup: true, cgroup: null, notUnder: [] },
      members: [
        { process: p(11, 10, ["npm exec @modelcontextprotocol/server-memory", ""]), why: "child-chain" as const },
        { process: p(12, 11, ["sh", "-c", "mcp-server-memory"]), why: "child-chain" as const },
        { process: p(13, 12, ["node", "/x/node_modules/.bin/mcp-server-memory"]), why: "child-chain" as const },
        { process: p(14, 10, ["uvx", "mcp-server-fetch"]), why: "child-chain" as const },
        { process: p(15, 14, ["/root/.cache/uv/bin/python", "/root/.cache/uv/bin/mcp-server-fetch"]), why: "child-chain" as const },
      ],
    };
    const roles = classifyMembers(census, [npx, uvx]).map((m) => m.role.kind);
    expect(roles).toEqual(["server", "servers-own", "servers-own", "server", "servers-own"]);
  });
});
