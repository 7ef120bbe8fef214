/**
 * `outlive agent run` and `outlive agent retire`, each a separate CLI
 * process (so every call is a new supervisor adopting the task), under the
 * default shell, on a real task cgroup.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CgroupV2Placement, readProcStat } from "../../lib/internal.ts";
import { waitFor } from "../support/wait.ts";

const CLI = join(import.meta.dirname, "../../dist/scripts/outlive.js");
const PREFIX = `hc${process.pid}`;
const probe = await new CgroupV2Placement({ prefix: PREFIX }).probe();
if (!probe.ok) console.log(`outlive agent: skipped: ${probe.reason}`);
const work = mkdtempSync(join(tmpdir(), "outlive-agent-cli-"));
const flags = ["--storage", join(work, "store"), "--mode", "daemon", "--placement", "cgroup-v2", "--prefix", PREFIX];
const outlive = (...args: string[]) => spawnSync("/bin/sh", ["-c", 'exec "$0" "$@"', process.execPath, CLI, ...args], { encoding: "utf8", cwd: work });
let id: string | null = null;

afterAll(() => {
  if (id) outlive("kill", ...flags, id);
  rmSync(work, { recursive: true, force: true });
});

describe.skipIf(!probe.ok)("outlive agent", () => {
  it("runs an agent with its launch record; retire keeps it while an escapee runs in its cgroup, then ends it all", async () => {
    const pidFile = join(work, "escapee.pid");
    const server = JSON.stringify({ name: "sleeper", command: "sleep", args: ["303"] });
    const run = outlive("agent", "run", ...flags, "--agent", "other", "--server", server, "--", "sh", "-c", `sleep 303 & ( setsid sh -c 'echo $$ > ${pidFile}; exec sleep 304' & ) ; wait`);
    expect(run.status, run.stderr).toBe(0);
    id = run.stdout.trim();
    expect(run.stderr).toContain("launch record: 1 MCP server (sleeper)");
    await waitFor("the escapee's pid", () => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n"));
    const escapee = Number(readFileSync(pidFile, "utf8"));

    // Its pid was written before its exec and before its short-lived parents ended; wait until only it stands in the way.
    await waitFor("the escapee to be what keeps the agent", () => outlive("agent", "retire", ...flags, id!, "--dry-run").stdout.includes(`pid ${escapee} runs sleep 304`));
    const kept = outlive("agent", "retire", ...flags, id);
    expect(kept.status, kept.stderr).toBe(3);
    expect(kept.stdout).toMatch(new RegExp(`kept: pid ${escapee} runs sleep 304 \\(cgroup-member; its launch record, cgroup /\\S+${PREFIX}-task-${id}\\)`));

    process.kill(escapee, "SIGKILL");
    await waitFor("the escapee to end", () => {
      const stat = readProcStat(escapee);
      return stat === null || stat.state === "Z";
    });
    const dry = outlive("agent", "retire", ...flags, id, "--dry-run");
    expect(dry.status, dry.stdout + dry.stderr).toBe(0);
    expect(dry.stdout).toContain("may be retired");
    const retired = outlive("agent", "retire", ...flags, id);
    expect(retired.status, retired.stderr).toBe(0);
    expect(retired.stdout).toMatch(/retired \(harness pid \d+; only 1 MCP server of its launch record ran under it/);
    const ps = outlive("ps", ...flags);
    expect(ps.stdout).toMatch(new RegExp(`${id}\\s+killed`));
    id = null;
  });

  it("answers usage errors with exit 2", () => {
    expect(outlive("agent", "run", ...flags).status).toBe(2);
    expect(outlive("agent", "retire", ...flags).status).toBe(2);
    expect(outlive("agent", "nope").status).toBe(2);
    expect(outlive("agent", "run", ...flags, "--server", "{", "--", "true").stderr).toContain("--server takes a JSON object");
  });
});
