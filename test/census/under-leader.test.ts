import { spawn } from "node:child_process";
import { readFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { takeSnapshot, underLeader, type CensusProcess, type ProcessSnapshot } from "../../lib/census/mod.ts";
import { readProcStat } from "../../lib/proc/stat.ts";
import { UNREAPED_CHILD } from "../../harness/inside/kits/unreaped-child.ts";
import { endStarted, startHarness, started, waitFor } from "./harness-process.ts";

afterEach(() => endStarted());

const proc = (pid: number, ppid: number, pgid: number, state = "S", startTime = "100"): CensusProcess => ({
  pid,
  ppid,
  pgid,
  sid: 1,
  state,
  startTime,
  argv: [`p${pid}`],
  name: `p${pid}`,
});
const snap = (processes: CensusProcess[], complete = true): ProcessSnapshot => ({
  source: "proc",
  exactArgv: true,
  complete,
  problems: complete ? [] : [{ code: "snapshot-incomplete", message: "cannot read /proc/9/stat" }],
  processes,
  takenAt: 0,
});

describe("underLeader on plain data", () => {
  const world = [proc(1, 0, 1), proc(5, 1, 5), proc(10, 5, 10), proc(11, 10, 10), proc(12, 11, 12), proc(13, 1, 10), proc(14, 13, 14), proc(15, 10, 10, "Z"), proc(16, 5, 5)];

  it("takes the child chain, then group members reparented to init with their children", () => {
    const r = underLeader(snap(world), { pid: 10, startTime: "100" }, { callerPgid: 5 });
    expect(r.ok && r.census.members.map((m) => [m.process.pid, m.why])).toEqual([
      [11, "child-chain"],
      [12, "child-chain"],
      [13, "group-member"],
      [14, "child-chain"],
    ]);
  });

  it("never takes the caller's own group for the leader's", () => {
    const r = underLeader(snap(world), { pid: 10 }, { callerPgid: 10 });
    expect(r.ok && r.census.groupTaken).toBe(false);
    expect(r.ok && r.census.members.map((m) => m.process.pid)).toEqual([11, 12]);
    // The default caller group is this process's group as found in the snapshot.
    const mine = underLeader(snap([...world, proc(77, 1, 10)]), { pid: 10 }, { callerPid: 77 });
    expect(mine.ok && mine.census.groupTaken).toBe(false);
  });

  it("fails closed: incomplete, missing, zombie, or another process under the same pid", () => {
    const code = (r: ReturnType<typeof underLeader>) => (r.ok ? "ok" : r.error.code);
    expect(code(underLeader(snap(world, false), { pid: 10 }))).toBe("snapshot-incomplete");
    expect(code(underLeader(snap(world), { pid: 99 }))).toBe("leader-missing");
    expect(code(underLeader(snap(world), { pid: 15 }))).toBe("leader-zombie");
    expect(code(underLeader(snap(world), { pid: 10, startTime: "101" }))).toBe("leader-identity-changed");
    const fromPs = { ...snap(world.map((p) => ({ ...p, startTime: null }))), source: "ps" as const };
    expect(code(underLeader(fromPs, { pid: 10, startTime: "100" }))).toBe("leader-identity-unverifiable");
  });

  it("is exactly the descendants plus the group and theirs, never the leader, its ancestors in its group, or a zombie (property)", () => {
    const forest = fc.array(fc.record({ parent: fc.nat(30), group: fc.nat(4), zombie: fc.boolean() }), { minLength: 1, maxLength: 30 });
    fc.assert(
      fc.property(forest, fc.nat(29), (nodes, pick) => {
        // pid i+2, parent must be an earlier pid (or 1), so links form a forest.
        const ps = nodes.map((n, i) => proc(i + 2, n.parent < i + 2 && n.parent >= 1 ? n.parent : 1, 1000 + n.group, n.zombie ? "Z" : "S"));
        const all = [proc(1, 0, 1), ...ps];
        const leader = all[pick % all.length];
        if (leader.state === "Z" || leader.pid === 1) return;
        const r = underLeader(snap(all), { pid: leader.pid }, { callerPgid: -1 });
        expect(r.ok).toBe(true);
        if (!r.ok) return;
        const got = new Set(r.census.members.map((m) => m.process.pid));
        // The leader's ancestors in its own group (an outlive wrapper above a harness) started the leader:
        // they are not under it. (Every argv here is distinct, so no ancestor has a fork of its own code.)
        const ancestors = new Set<number>();
        for (let up = all.find((p) => p.pid === leader.ppid); up && up.pgid === leader.pgid && !ancestors.has(up.pid); up = all.find((p) => p.pid === up!.ppid)) {
          ancestors.add(up.pid);
        }
        const want = new Set<number>();
        const grow = (from: number) => {
          for (const p of all) {
            if (p.ppid === from && p.state !== "Z" && p.pid !== leader.pid && !ancestors.has(p.pid) && !want.has(p.pid)) (want.add(p.pid), grow(p.pid));
          }
        };
        grow(leader.pid);
        for (const p of all) {
          if (p.pgid === leader.pgid && p.pid !== leader.pid && p.state !== "Z" && !ancestors.has(p.pid) && !want.has(p.pid)) (want.add(p.pid), grow(p.pid));
        }
        expect([...got].sort()).toEqual([...want].sort());
        expect(r.census.members.length).toBe(got.size);
      }),
    );
  });
});

describe("underLeader on real processes", () => {
  it("finds a same-group worker, a setsid child, and a group member reparented to init", async () => {
    const dir = mkdtempSync(join(tmpdir(), "census-orphan-"));
    try {
      const pidFile = join(dir, "orphan.pid");
      const h = await startHarness([
        { argv: ["sleep", "300"] },
        { argv: ["sleep", "301"], setsid: true },
        { argv: ["sh", "-c", `sleep 302 & echo $! > ${pidFile}`] },
      ]);
      await waitFor(() => {
        try {
          return readFileSync(pidFile, "utf8").endsWith("\n") && readProcStat(h.children[2]) === null;
        } catch {
          return false;
        }
      });
      const orphan = Number(readFileSync(pidFile, "utf8"));
      started.add(orphan);
      await waitFor(() => readProcStat(orphan)?.ppid !== h.children[2]);
      const r = underLeader(await takeSnapshot(), { pid: h.pid, startTime: h.startTime });
      expect(r.ok).toBe(true);
      if (!r.ok) return;
      const why = Object.fromEntries(r.census.members.map((m) => [m.process.pid, m.why]));
      expect(why[h.children[0]]).toBe("child-chain");
      expect(why[h.children[1]]).toBe("child-chain");
      expect(readProcStat(h.children[1])!.sid).toBe(h.children[1]);
      expect(why[orphan]).toBe("group-member");
      expect(readProcStat(orphan)!.ppid).not.toBe(h.pid);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("skips a zombie child, and gives no answer for a zombie leader", async () => {
    // `sh` forks a child and then execs into a program that never reaps it.
    const h = await startHarness([], { shellPrefix: UNREAPED_CHILD });
    let zombie = 0;
    await waitFor(async () => {
      const z = (await takeSnapshot()).processes.find((p) => p.ppid === h.pid && p.state === "Z");
      zombie = z?.pid ?? 0;
      return zombie !== 0;
    });
    const r = underLeader(await takeSnapshot(), { pid: h.pid, startTime: h.startTime });
    expect(r.ok && r.census.members).toEqual([]);
    const asLeader = underLeader(await takeSnapshot(), { pid: zombie });
    expect(asLeader.ok || asLeader.error.code).toBe("leader-zombie");
  });

  it("does not take the caller's group when the leader shares it", async () => {
    const sibling = spawn("sleep", ["303"], { stdio: "ignore" });
    started.add(sibling.pid!);
    const h = await startHarness([], { detached: false });
    const r = underLeader(await takeSnapshot(), { pid: h.pid, startTime: h.startTime });
    expect(r.ok && r.census.groupTaken).toBe(false);
    expect(r.ok && r.census.members.map((m) => m.process.pid)).not.toContain(sibling.pid);
  });

  it("refuses a recorded start time that is not the live process's", async () => {
    const h = await startHarness([]);
    const r = underLeader(await takeSnapshot(), { pid: h.pid, startTime: String(Number(h.startTime) + 1) });
    expect(r.ok || r.error.code).toBe("leader-identity-changed");
    h.process.kill("SIGKILL");
    await waitFor(() => readProcStat(h.pid) === null);
    const gone = underLeader(await takeSnapshot(), { pid: h.pid, startTime: h.startTime });
    expect(gone.ok || gone.error.code).toBe("leader-missing");
  });
});

describe("underLeader with the cgroup source (plain data)", () => {
  const wrapperArgv = ["/bin/sh", "-c", "wrapper", "outlive-task"];
  const withArgv = (p: CensusProcess, argv: string[]): CensusProcess => ({ ...p, argv });
  // 5: the task's wrapper (group leader); 6: its warden (a fork: same argv) and 7 the warden's sleep;
  // 10: the harness; 11: its child; 20: a setsid + double-forked escapee (ppid 1, own group); 21: a zombie in the cgroup.
  const processes = [
    proc(1, 0, 1),
    withArgv(proc(5, 1, 5), wrapperArgv),
    withArgv(proc(6, 5, 5), wrapperArgv),
    proc(7, 6, 5),
    proc(10, 5, 5),
    proc(11, 10, 5),
    proc(20, 1, 20),
    proc(21, 1, 21, "Z"),
    proc(30, 1, 30),
  ];
  const cgroup = { cgroup: "/o/o-task-t-1", pids: [5, 6, 7, 10, 11, 20, 21] };

  it("counts every live process of the cgroup as a cgroup member, but not the leader's ancestors and their forks", () => {
    const r = underLeader(snap(processes), { pid: 10 }, { callerPgid: 1, cgroup });
    expect(r.ok && r.census.members.map((m) => [m.process.pid, m.why])).toEqual([[11, "child-chain"], [20, "cgroup-member"]]);
    expect(r.ok && r.census.sources).toEqual({ parentChain: true, processGroup: true, cgroup: "/o/o-task-t-1", notUnder: [5, 6, 7] });
  });

  it("without it the escapee is invisible, and the wrapper in the leader's group is still not under it", () => {
    const r = underLeader(snap(processes), { pid: 10 }, { callerPgid: 1, cgroupNote: "none asked for" });
    expect(r.ok && r.census.members.map((m) => m.process.pid)).toEqual([11]);
    expect(r.ok && r.census.sources.cgroupNote).toBe("none asked for");
  });

  it("a fork of an ancestor that exec'd something else is counted (only the ancestor's own code is not)", () => {
    const exec = processes.map((p) => (p.pid === 6 ? withArgv(p, ["vite"]) : p));
    const r = underLeader(snap(exec), { pid: 10 }, { callerPgid: 1, cgroup });
    expect(r.ok && r.census.members.map((m) => m.process.pid).sort((a, b) => a - b)).toEqual([6, 7, 11, 20]);
  });
});
