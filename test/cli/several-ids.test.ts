import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { outliveCli, outliveCliAwaited, tempDir } from "../support/cli.ts";

const temp = tempDir("outlive-ids-");
const storage = join(temp.dir, "storage");
// Awaited, so the worker answers vitest meanwhile: the kill test's calls, run with spawnSync, blocked it 20 s under load.
const outlive = (...args: string[]) => outliveCliAwaited([args[0], "--storage", storage, ...args.slice(1)]);
afterAll(() => {
  outliveCli(["stop-all", "--storage", storage]);
  temp.remove();
});

/** Whether `pid` still runs: a zombie waiting for its reaper (this host's init is slow at it) has ended. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

describe("commands that take several ids", () => {
  it("kill ID… kills each; an unknown one is said and exits 1 while the others are still killed", async () => {
    for (const id of ["k1", "k2"]) expect((await outlive("run", "--id", id, "--", "sleep", "300")).code).toBe(0);
    const pids: number[] = [];
    for (const id of ["k1", "k2"]) pids.push(JSON.parse((await outlive("inspect", id, "--json")).out).pid);
    const r = await outlive("kill", "k1", "nosuch", "k2", "--json", "--grace", "500");
    expect(r.code).toBe(1);
    const lines = r.out.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.task.id, l.task.state])).toEqual([["k1", "killed"], ["k2", "killed"]]);
    expect(JSON.parse(r.err)).toMatchObject({ error: { code: "E_NO_TASK", exitCode: 1 } });
    for (const pid of pids) expect(alive(pid)).toBe(false);
  });

  it("wait ID… exits with the first status that is not 0, in the order given", async () => {
    expect((await outlive("run", "--id", "ok", "--", "true")).code).toBe(0);
    expect((await outlive("run", "--id", "three", "--", "sh", "-c", "exit 3")).code).toBe(0);
    expect((await outlive("run", "--id", "five", "--", "sh", "-c", "exit 5")).code).toBe(0);
    const both = await outlive("wait", "ok", "three", "five", "--json");
    expect(both.code).toBe(3);
    expect(both.out.trim().split("\n").map((l) => JSON.parse(l).exitCode)).toEqual([0, 3, 5]);
    expect((await outlive("wait", "five", "three")).code).toBe(5);
    expect((await outlive("wait", "ok", "ok")).code).toBe(0);
    // A killed task ended without an exit code of its own: 125, as for one id.
    expect((await outlive("wait", "ok", "k1")).code).toBe(125);
    const unknown = await outlive("wait", "ok", "nosuch");
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('No task "nosuch"');
  });

  it("ack ID… acknowledges each; an unknown or live one is said and exits 1 while the others are still acknowledged", async () => {
    expect((await outlive("run", "--id", "a1", "--", "true")).code).toBe(0);
    expect((await outlive("run", "--id", "a2", "--", "true")).code).toBe(0);
    expect((await outlive("run", "--id", "alive", "--", "sleep", "300")).code).toBe(0);
    expect((await outlive("wait", "a1", "a2")).code).toBe(0);
    const r = await outlive("ack", "a1", "nosuch", "alive", "a2", "--json");
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).map((t: { id: string }) => t.id)).toEqual(["a1", "a2"]);
    expect(r.err.trim().split("\n").map((l) => JSON.parse(l).error.code)).toEqual(["E_NO_TASK", "E_TASK_LIVE"]);
    for (const id of ["a1", "a2"]) expect(JSON.parse((await outlive("inspect", id, "--json")).out).acknowledgedAt).not.toBeNull();
    expect(JSON.parse((await outlive("inspect", "alive", "--json")).out).acknowledgedAt).toBeNull();
    expect((await outlive("kill", "alive")).code).toBe(0);
  });

  it("wait --timeout is one deadline for all: a task still running then gives 124", async () => {
    expect((await outlive("run", "--id", "slow", "--", "sleep", "300")).code).toBe(0);
    const r = await outlive("wait", "ok", "slow", "--timeout", "1s", "--json");
    expect(r.code).toBe(124);
    expect(r.out.trim().split("\n").map((l) => JSON.parse(l).state)).toEqual(["exited", "running"]);
  });

  it("rm -f kills the live ones, then removes them all", async () => {
    const pid = JSON.parse((await outlive("inspect", "slow", "--json")).out).pid as number;
    expect((await outlive("rm", "slow")).code).toBe(1);
    expect(alive(pid)).toBe(true);
    const r = await outlive("rm", "-f", "slow", "ok", "--json");
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out).removed.sort()).toEqual(["ok", "slow"]);
    expect(alive(pid)).toBe(false);
    expect(existsSync(join(storage, "tasks", "slow"))).toBe(false);
    const none = await outlive("rm", "-f", "nosuch");
    expect(none.code).toBe(1);
    expect(none.err).toContain("nosuch");
  });
});
