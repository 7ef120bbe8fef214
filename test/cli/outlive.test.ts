import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runToEnd } from "../support/run-to-end.ts";

const CLI = join(__dirname, "..", "..", "dist", "scripts", "outlive.js");
const storage = mkdtempSync(join(tmpdir(), "outlive-cli-"));
afterAll(async () => {
  await outlive("stop-all");
  rmSync(storage, { recursive: true, force: true });
});

/** Awaited: one test's CLI runs blocked the worker 43 s under load (test/support/run-to-end.ts). */
async function outlive(...args: string[]) {
  // --storage goes right after the command name: anything after `--` belongs to the task.
  const withStorage = ["probe", "census", "schema"].includes(args[0]) ? args : [args[0], "--storage", storage, ...args.slice(1)];
  const r = await runToEnd(process.execPath, [CLI, ...withStorage], { timeoutMs: 30_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe("the outlive CLI", () => {
  it("runs a task, waits for it, prints its logs and its record as JSON", async () => {
    const run = await outlive("run", "--id", "hello", "--", "sh", "-c", 'echo "out $1"; echo err >&2; exit 3', "sh", "a $b");
    expect(run.code).toBe(0);
    expect(run.out.trim()).toBe("hello");
    const waited = await outlive("wait", "hello", "--json");
    // wait exits with the task's own exit code.
    expect(waited.code).toBe(3);
    const task = JSON.parse(waited.out);
    for (const field of ["id", "state", "exitCode", "reason", "pid", "startedAt", "finishedAt", "placement"]) expect(task).toHaveProperty(field);
    expect(task).toMatchObject({ id: "hello", state: "exited", exitCode: 3, placement: "process-group" });
    expect((await outlive("logs", "hello")).out).toBe("out a $b\n");
    expect((await outlive("logs", "hello", "--stderr")).out).toBe("err\n");
    expect((await outlive("logs", "hello", "--tail", "1")).out).toBe("out a $b\n");
  });

  it("kills a task with the ladder and says how", async () => {
    expect((await outlive("run", "--id", "sleeper", "--timeout", "60", "--", "sleep", "60")).code).toBe(0);
    const killed = await outlive("kill", "sleeper", "--grace", "1000", "--json");
    expect(killed.code).toBe(0);
    expect(JSON.parse(killed.out)).toMatchObject({ how: "term", task: { state: "killed" } });
    const again = JSON.parse((await outlive("kill", "sleeper", "--json")).out);
    expect(again.how).toBe("terminal");
  });

  it("lists every task with ps --json, and replays", async () => {
    const ps = JSON.parse((await outlive("ps", "--json")).out);
    expect(ps.tasks.map((t: { id: string }) => t.id)).toEqual(expect.arrayContaining(["hello", "sleeper"]));
    const replay = await outlive("replay", "--json");
    expect(replay.code).toBe(0);
    expect(JSON.parse(replay.out).report).toHaveProperty("adopted");
  });

  it("refuses bad input with exit code 2 and one line naming it", async () => {
    const badId = await outlive("run", "--id", "../etc", "--", "true");
    expect(badId.code).toBe(2);
    expect(badId.err).toContain('"../etc"');
    expect(badId.err.trim().split("\n")).toHaveLength(1);
    const noCmd = await outlive("run");
    expect(noCmd.code).toBe(2);
    const unknown = await outlive("frobnicate");
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("frobnicate");
    const badFlag = await outlive("ps", "--nope");
    expect(badFlag.code).toBe(2);
    const badTimeout = await outlive("run", "--timeout", "soon", "--", "true");
    expect(badTimeout.code).toBe(2);
    expect(badTimeout.err).toContain("--timeout");
  });

  it("has --help everywhere", async () => {
    for (const cmd of ["run", "ps", "wait", "kill", "logs", "ack", "rm", "prune", "replay", "stop-all", "probe", "census", "schema"]) {
      const r = await outlive(cmd, "--help");
      expect(r.code, cmd).toBe(0);
      expect(r.out.toLowerCase(), cmd).toContain("usage");
    }
  });

  it("probe says, for every placement, whether it works and why", async () => {
    const probe = JSON.parse((await outlive("probe", "--json")).out);
    expect(probe.probes.map((p: { name: string }) => p.name)).toEqual(["systemd-scope", "cgroup-v2", "process-group"]);
    for (const p of probe.probes) expect(p.reason.length).toBeGreaterThan(5);
    expect(probe.auto.standalone.name).toBe("process-group");
  });

  it("schema prints the wire protocol's published schema, as it is in the package", async () => {
    const r = await outlive("schema");
    expect(r.code, r.err).toBe(0);
    const published = readFileSync(join(__dirname, "..", "..", "lib", "rpc", "schema", "outlive-rpc.schema.json"), "utf8");
    expect(JSON.parse(r.out)).toEqual(JSON.parse(published));
    expect((await outlive("schema", "extra")).code).toBe(2);
  });
});
