import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { censusCommand } from "../../scripts/commands/census.ts";
import { endStarted, startHarness, waitFor } from "./harness-process.ts";
import { readProcStat } from "../../lib/proc/stat.ts";

afterEach(() => endStarted());

async function run(args: string[]) {
  let out = "";
  let err = "";
  const code = await censusCommand(args, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

describe("outlive census", () => {
  it("prints the tree under a pid with why each process is included", async () => {
    const h = await startHarness([{ argv: ["sleep", "320"] }, { argv: ["sleep", "321"], setsid: true }]);
    // Just after its exec a sleep may still be running (R) its start-up; the table prints the state it reads.
    await waitFor(() => h.children.every((pid) => readProcStat(pid)?.state === "S"));
    const r = await run([String(h.pid)]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(new RegExp(`${h.children[0]}\\s+${h.pid}\\s+S\\s+child-chain\\s+sleep 320`));
    expect(r.out).toMatch(new RegExp(`${h.children[1]}\\s+${h.children[1]}\\s+S\\s+child-chain\\s+sleep 321`));
    expect(r.out).not.toContain("decision");
  });

  it("gives the decision, as JSON too, when launch inputs are given", async () => {
    const root = mkdtempSync(join(tmpdir(), "census-cli-"));
    try {
      const cwd = join(root, "project");
      mkdirSync(cwd);
      const config = JSON.stringify({ mcpServers: { s: { command: "sleep", args: ["322"] } } });
      const h = await startHarness([{ argv: ["sleep", "322"] }], { cwd });
      await waitFor(() => readProcStat(h.children[0])?.comm === "sleep");
      const text = await run([String(h.pid), "--mcp-config", config, "--strict-mcp-config", "--start-time", h.startTime]);
      expect(text.out).toContain("server s");
      expect(text.out).toContain("decision: retire (1 MCP server");
      writeFileSync(join(cwd, ".mcp.json"), "not json");
      const json = JSON.parse((await run([String(h.pid), "--json", "--cwd", cwd])).out);
      expect(json.decision).toMatchObject({ verdict: "keep", blocking: { pid: h.children[0], argv: ["sleep", "322"] } });
      expect(json.launchRecord.notes.map((n: { code: string }) => n.code)).toContain("config-unparsable");
      expect(json.members[0]).toMatchObject({ pid: h.children[0], why: "child-chain", role: { kind: "unclaimed" } });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("says why it has no answer, and exits 1", async () => {
    const h = await startHarness([]);
    const r = await run([String(h.pid), "--start-time", String(Number(h.startTime) + 5)]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("leader-identity-changed");
  });

  it("answers usage errors with one line on stderr and exit 2", async () => {
    for (const args of [[], ["x"], ["1", "2"], ["0"], ["1", "--nope"], ["1", "--start-time", "soon"], ["1", "--codex", "--mcp-config", "a"], ["1", "--timeout-ms", "-1"], ["1", "--cgroup", "relative/path"], ["1", "--cgroup", ""]]) {
      const r = await run(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.err.trimEnd().split("\n")).toHaveLength(1);
      expect(r.out).toBe("");
    }
    const help = await run(["--help"]);
    expect(help.code).toBe(0);
    expect(help.out).toContain("Usage: outlive census PID");
    const bad = await run(["1", "--cgroup", "mine"]);
    expect(bad.err).toContain("--cgroup must be auto, none or an absolute cgroup path, got \"mine\"");
  });
});
