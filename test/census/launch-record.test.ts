import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { claudeArgvConfigs, readLaunchRecord, serversFromCodexToml, type LaunchInputs, type LaunchRecord } from "../../lib/census/mod.ts";

let root: string;
let home: string;
let cwd: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "census-config-"));
  home = join(root, "home");
  cwd = join(root, "project");
  mkdirSync(home);
  mkdirSync(cwd);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const claude = (argv: string[] = ["claude"], env: Record<string, string> = {}): LaunchInputs => ({
  agent: "claude-code",
  argv,
  cwd,
  env: { HOME: home, PATH: "/usr/bin:/bin", ...env },
});
const names = (r: LaunchRecord) => r.servers.map((s) => s.name).sort();
const codes = (r: LaunchRecord) => r.notes.map((n) => n.code);
const mcp = (servers: unknown) => JSON.stringify({ mcpServers: servers });

describe("claudeArgvConfigs", () => {
  it("reads variadic, = and repeated forms, the strict flag, and stops at --", () => {
    expect(claudeArgvConfigs(["claude", "--mcp-config", "a.json", "b.json", "--mcp-config=c.json", "--strict-mcp-config", "-p", "x", "--", "--mcp-config", "d"])).toEqual({
      configs: ["a.json", "b.json", "c.json"],
      strict: true,
    });
    expect(claudeArgvConfigs(["claude"])).toEqual({ configs: [], strict: false });
  });

  it("returns every value given, in order (property)", () => {
    const value = fc.stringMatching(/^[^-][^\0]{0,20}$/);
    fc.assert(
      fc.property(fc.array(fc.array(value, { minLength: 1, maxLength: 3 }), { maxLength: 4 }), (groups) => {
        const argv = ["claude", ...groups.flatMap((g) => ["--mcp-config", ...g, "--verbose"])];
        expect(claudeArgvConfigs(argv).configs).toEqual(groups.flat());
      }),
    );
  });
});

describe("readLaunchRecord: Claude Code sources", () => {
  it("reads --mcp-config files (relative to the folder) and inline JSON", async () => {
    writeFileSync(join(cwd, "extra.json"), mcp({ file: { command: "file-srv", args: ["--x"] } }));
    const r = await readLaunchRecord(claude(["claude", "--mcp-config", "extra.json", mcp({ inline: { command: "inline-srv" } })]));
    expect(r.known).toBe(true);
    expect(names(r)).toEqual(["file", "inline"]);
    expect(r.servers.find((s) => s.name === "file")).toMatchObject({ command: "file-srv", args: ["--x"], source: `--mcp-config ${join(cwd, "extra.json")} mcpServers` });
  });

  it("reads .claude.json user and project servers from $HOME, and the folder's .mcp.json", async () => {
    writeFileSync(
      join(home, ".claude.json"),
      JSON.stringify({ mcpServers: { user: { command: "u" } }, projects: { [cwd]: { mcpServers: { project: { command: "p" } } }, "/elsewhere": { mcpServers: { other: { command: "o" } } } } }),
    );
    writeFileSync(join(cwd, ".mcp.json"), mcp({ folder: { type: "stdio", command: "f" }, remote: { type: "http", url: "https://x" } }));
    const r = await readLaunchRecord(claude());
    expect(names(r)).toEqual(["folder", "project", "user"]);
    expect(codes(r)).toEqual(["server-remote"]);
  });

  it("prefers $CLAUDE_CONFIG_DIR over $HOME", async () => {
    const dir = join(root, "claude-dir");
    mkdirSync(dir);
    writeFileSync(join(dir, ".claude.json"), JSON.stringify({ mcpServers: { fromDir: { command: "d" } } }));
    writeFileSync(join(home, ".claude.json"), JSON.stringify({ mcpServers: { fromHome: { command: "h" } } }));
    expect(names(await readLaunchRecord(claude(["claude"], { CLAUDE_CONFIG_DIR: dir })))).toEqual(["fromDir"]);
  });

  it("reads only --mcp-config under --strict-mcp-config", async () => {
    writeFileSync(join(home, ".claude.json"), JSON.stringify({ mcpServers: { user: { command: "u" } } }));
    writeFileSync(join(cwd, ".mcp.json"), mcp({ folder: { command: "f" } }));
    const r = await readLaunchRecord(claude(["claude", "--strict-mcp-config", "--mcp-config", mcp({ only: { command: "o" } })]));
    expect(names(r)).toEqual(["only"]);
  });

  it("names a missing source in the notes and adds nothing", async () => {
    const r = await readLaunchRecord(claude(["claude", "--mcp-config", "nope.json"]));
    expect(r.known).toBe(true);
    expect(r.servers).toEqual([]);
    expect(codes(r)).toEqual(["config-missing", "config-missing", "config-missing"]);
    expect(r.notes[0].message).toContain(join(cwd, "nope.json"));
  });

  it("resolves a bare command on the harness's PATH and a relative path against its folder", async () => {
    const bin = join(root, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "tool"), "#!/bin/sh\n", { mode: 0o755 });
    writeFileSync(join(root, "not-exec"), "", { mode: 0o644 });
    writeFileSync(join(cwd, ".mcp.json"), mcp({ bare: { command: "tool" }, rel: { command: "./srv/run" }, none: { command: "absent-tool" } }));
    const r = await readLaunchRecord(claude(["claude"], { PATH: `${root}:${bin}` }));
    const forms = Object.fromEntries(r.servers.map((s) => [s.name, s.programs]));
    expect(forms).toEqual({ bare: ["tool", join(bin, "tool")], rel: ["./srv/run", join(cwd, "srv/run")], none: ["absent-tool"] });
  });
});

describe("readLaunchRecord: broken Claude Code sources add nothing and never throw", () => {
  it("not JSON", async () => {
    writeFileSync(join(cwd, ".mcp.json"), "{ mcpServers: nope");
    writeFileSync(join(home, ".claude.json"), "");
    const r = await readLaunchRecord(claude(["claude", "--mcp-config", "{not json"]));
    expect(r.servers).toEqual([]);
    expect(codes(r)).toEqual(["config-unparsable", "config-unparsable", "config-unparsable"]);
  });

  it("wrong types, at every level", async () => {
    writeFileSync(join(home, ".claude.json"), JSON.stringify({ mcpServers: ["a"], projects: "x" }));
    writeFileSync(
      join(cwd, ".mcp.json"),
      mcp({
        number: 7,
        nullish: null,
        list: [],
        noCommand: {},
        emptyCommand: { command: "" },
        spacedCommand: { command: "npx -y srv" },
        numberCommand: { command: 42 },
        argsString: { command: "a", args: "--x" },
        argNumber: { command: "a", args: ["--port", 80] },
        argEmpty: { command: "a", args: [""] },
        argSpaced: { command: "a", args: ["two words"] },
        argTab: { command: "a", args: ["x\ty"] },
        bareInterpreter: { command: "/usr/bin/python" },
        good: { command: "a", args: ["--ok"] },
      }),
    );
    const r = await readLaunchRecord(claude(["claude", "--mcp-config", "[1,2]", "--mcp-config", JSON.stringify({ mcpServers: "x" })]));
    expect(names(r)).toEqual(["good"]);
    expect(codes(r).filter((c) => c === "config-wrong-type")).toHaveLength(3);
    expect(codes(r).filter((c) => c === "server-invalid")).toHaveLength(13);
  });

  it("a huge file, a symlink loop, a folder, a FIFO and an unreadable path", async () => {
    truncateSync((writeFileSync(join(home, ".claude.json"), ""), join(home, ".claude.json")), 17 * 1024 * 1024);
    symlinkSync(join(cwd, "loop-b"), join(cwd, "loop-a"));
    symlinkSync(join(cwd, "loop-a"), join(cwd, "loop-b"));
    mkdirSync(join(cwd, ".mcp.json"));
    execFileSync("mkfifo", [join(cwd, "fifo.json")]);
    const r = await readLaunchRecord(
      claude(["claude", "--mcp-config", "loop-a", "fifo.json", "x".repeat(5000)]),
    );
    expect(r.known).toBe(true);
    expect(r.servers).toEqual([]);
    expect(codes(r)).toEqual(["config-symlink-loop", "config-not-a-file", "config-unreadable", "config-too-large", "config-not-a-file"]);
  });

  it("a file over maxConfigBytes", async () => {
    writeFileSync(join(cwd, ".mcp.json"), mcp({ s: { command: "x", args: ["y".repeat(2000)] } }));
    const r = await readLaunchRecord(claude(), { maxConfigBytes: 1024 });
    expect(codes(r)).toContain("config-too-large");
    expect(r.servers).toEqual([]);
  });

  it("an unreadable file, for a user who is not root", async () => {
    writeFileSync(join(cwd, ".mcp.json"), mcp({ s: { command: "x" } }));
    chmodSync(join(cwd, ".mcp.json"), 0o000);
    const r = await readLaunchRecord(claude());
    // root reads anything; anyone else is refused, and either way nothing throws.
    if (process.getuid?.() === 0) expect(names(r)).toEqual(["s"]);
    else expect(codes(r)).toContain("config-unreadable");
  });

  it("never throws, whatever JSON it is given (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        writeFileSync(join(cwd, ".mcp.json"), JSON.stringify({ mcpServers: value }));
        writeFileSync(join(home, ".claude.json"), JSON.stringify(value));
        const r = await readLaunchRecord(claude());
        expect(r.known).toBe(true);
        for (const s of r.servers) {
          expect(s.command).toMatch(/^\S+$/);
          for (const a of s.args) expect(a).toMatch(/^\S+$/);
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe("readLaunchRecord: Codex config.toml", () => {
  const codex = (env: Record<string, string> = {}): LaunchInputs => ({ agent: "codex", cwd, env: { HOME: home, PATH: "/usr/bin", ...env } });

  it("reads [mcp_servers] from $HOME/.codex, or from $CODEX_HOME", async () => {
    mkdirSync(join(home, ".codex"));
    writeFileSync(join(home, ".codex", "config.toml"), '[mcp_servers.docs]\ncommand = "docs-mcp"\nargs = ["--stdio"]\n\n[mcp_servers.web]\nurl = "https://x"\n\n[mcp_servers.off]\ncommand = "o"\nenabled = false\n');
    const r = await readLaunchRecord(codex());
    expect(r.servers.map((s) => [s.name, s.command, s.args])).toEqual([["docs", "docs-mcp", ["--stdio"]]]);
    expect(codes(r)).toEqual(["server-remote", "server-disabled"]);
    const codexHome = join(root, "codex-home");
    mkdirSync(codexHome);
    writeFileSync(join(codexHome, "config.toml"), "[mcp_servers.other]\ncommand = \"other\"\n");
    expect(names(await readLaunchRecord(codex({ CODEX_HOME: codexHome })))).toEqual(["other"]);
  });

  it("adds nothing from a file that is not TOML or has the wrong types", async () => {
    expect(serversFromCodexToml("[mcp_servers\ncommand=", "c.toml").notes[0].code).toBe("config-unparsable");
    expect(serversFromCodexToml('mcp_servers = "x"', "c.toml").notes[0].code).toBe("config-wrong-type");
    expect(serversFromCodexToml('[mcp_servers.a]\ncommand = ["x"]\n[mcp_servers.b]\ncommand = "b"\nargs = [1]', "c.toml").notes.map((n) => n.code)).toEqual([
      "server-invalid",
      "server-invalid",
    ]);
    expect(serversFromCodexToml("title = 1", "c.toml")).toEqual({ servers: [], notes: [] });
    const r = await readLaunchRecord(codex());
    expect(codes(r)).toEqual(["config-missing"]);
  });

  it("never throws on arbitrary text (property)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        const r = serversFromCodexToml(`[mcp_servers.x]\n${text}`, "c.toml");
        expect(Array.isArray(r.servers)).toBe(true);
      }),
    );
  });
});

describe("readLaunchRecord: servers given by the caller (ACP)", () => {
  it("takes stdio servers, leaves out remote and malformed ones", async () => {
    const r = await readLaunchRecord({
      agent: "other",
      cwd,
      env: { PATH: "/usr/bin" },
      servers: [{ name: "a", command: "a-srv", args: ["--x"], env: [] }, { type: "http", name: "h", url: "https://x", headers: [] }, "junk", { name: "b", command: " " }],
    });
    expect(names(r)).toEqual(["a"]);
    expect(codes(r)).toEqual(["server-remote", "server-invalid", "server-invalid"]);
    const notList = await readLaunchRecord({ agent: "other", cwd, env: {}, servers: "x" as unknown as unknown[] });
    expect(codes(notList)).toEqual(["config-wrong-type"]);
  });

  it("is unknown when the read is abandoned or runs out of time", async () => {
    const controller = new AbortController();
    controller.abort();
    const r = await readLaunchRecord(claude(), { signal: controller.signal });
    expect(r).toMatchObject({ known: false, servers: [] });
    expect(codes(r)).toEqual(["launch-record-unknown"]);

    // Thousands of PATH folders to search make the read slower than a 5 ms bound.
    const slowPath = Array.from({ length: 20_000 }, (_, i) => `/nonexistent/${i}`).join(":");
    writeFileSync(join(cwd, ".mcp.json"), mcp({ s: { command: "bare-name" } }));
    const late = await readLaunchRecord(claude(["claude"], { PATH: slowPath }), { timeoutMs: 5 });
    expect(late.known).toBe(false);
    expect(late.notes[0].message).toContain("5 ms");
  });
});
