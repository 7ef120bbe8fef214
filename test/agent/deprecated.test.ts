/**
 * The agent side's old names (from when it was "the harness") still work
 * for one release and say so: the library's are the new functions under
 * their old names, and the CLI's (`outlive harness`, `--harness`), each
 * called as a user would in a process of its own, print one line on stderr
 * naming the replacement.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  agentLeader,
  harnessLeader,
  launchAgent,
  launchHarness,
  mayRetireAgent,
  mayRetireHarness,
  readLaunchRecord,
  retireIdleAgent,
  retireIdleHarness,
  Supervisor,
} from "../../lib/mod.ts";
import { waitFor } from "../support/wait.ts";

const CLI = join(import.meta.dirname, "../../dist/scripts/outlive.js");
const work = mkdtempSync(join(tmpdir(), "outlive-deprecated-"));
const flags = ["--storage", join(work, "store"), "--mode", "standalone", "--placement", "process-group"];
const outlive = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", cwd: work, timeout: 30_000 });
const deprecations = (stderr: string) => stderr.split("\n").filter((line) => line.includes("deprecated"));
const left: string[] = [];

afterAll(() => {
  for (const id of left) outlive("kill", ...flags, id);
  rmSync(work, { recursive: true, force: true });
});

describe("the library's old agent names", () => {
  it("are the new functions", () => {
    expect(launchHarness).toBe(launchAgent);
    expect(mayRetireHarness).toBe(mayRetireAgent);
    expect(retireIdleHarness).toBe(retireIdleAgent);
    expect(harnessLeader).toBe(agentLeader);
  });

  it("take the spec's old field `harness` for `agent`, and name it in an error", async () => {
    const record = await readLaunchRecord({ harness: "other", cwd: work, env: {}, servers: [{ name: "s", command: "sleep", args: ["1"] }] });
    expect(record.servers.map((s) => s.name)).toEqual(["s"]);
    const sup = await Supervisor.open({ storage: join(work, "lib-store"), log: () => {} });
    try {
      const { task, launchRecord } = await launchHarness(sup, { harness: "other", argv: ["sleep", "30"], servers: [] });
      expect(launchRecord.known).toBe(true);
      await sup.kill(task.id);
      await expect(launchAgent(sup, { harness: "codex-ish", argv: ["true"] } as never)).rejects.toThrow("Expected the `harness` option to be one of claude-code, codex, other");
      await expect(launchAgent(sup, { agent: "other", harness: "other", argv: ["true"] } as never)).rejects.toThrow("got both");
    } finally {
      await sup.close();
    }
  });
});

describe("the CLI's old agent names", () => {
  it("`outlive harness` is `outlive agent`, with one line on stderr naming it", async () => {
    const help = outlive("harness", "--help");
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("usage: outlive agent run");
    expect(deprecations(help.stderr)).toEqual(["outlive: deprecated: outlive harness is now outlive agent (the old name is removed in the next release)"]);

    const server = JSON.stringify({ name: "sleeper", command: "sleep", args: ["308"] });
    const run = outlive("harness", "run", ...flags, "--agent", "other", "--server", server, "--json", "--", "sleep", "307");
    expect(run.status, run.stderr).toBe(0);
    const launched = JSON.parse(run.stdout) as { id: string; launchRecord: { servers: { name: string }[] } };
    left.push(launched.id);
    expect(launched.launchRecord.servers.map((s) => s.name)).toEqual(["sleeper"]);
    expect(deprecations(run.stderr)).toEqual(["outlive: deprecated: outlive harness is now outlive agent (the old name is removed in the next release)"]);

    await waitFor("the agent to be named", () => outlive("agent", "retire", ...flags, launched.id, "--dry-run").status === 0);
    const retired = outlive("harness", "retire", ...flags, launched.id);
    expect(retired.status, retired.stdout + retired.stderr).toBe(0);
    expect(retired.stdout).toContain(`${launched.id}: retired`);
    expect(deprecations(retired.stderr)).toHaveLength(1);
  });

  it("`--harness` is `--agent`, with one line on stderr naming it", () => {
    const run = outlive("agent", "run", ...flags, "--harness", "other", "--server", JSON.stringify({ name: "s", command: "sleep", args: ["1"] }), "--json", "--", "sleep", "306");
    expect(run.status, run.stderr).toBe(0);
    const launched = JSON.parse(run.stdout) as { id: string; launchRecord: { servers: { name: string }[] } };
    left.push(launched.id);
    expect(launched.launchRecord.servers.map((s) => s.name)).toEqual(["s"]);
    expect(deprecations(run.stderr)).toEqual(["outlive agent run: deprecated: --harness is now --agent (the old name is removed in the next release)"]);

    const both = outlive("agent", "run", ...flags, "--agent", "other", "--harness", "other", "--", "true");
    expect(both.status).toBe(2);
    expect(both.stderr).toContain("--agent and --harness");
  });

  it("the new names say nothing of deprecation", () => {
    const help = outlive("agent", "--help");
    expect(help.status).toBe(0);
    expect(help.stderr).toBe("");
  });
});
