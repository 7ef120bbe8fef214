import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { inspectPid, isSameProcess, parseProcStat, readCgroup, readProcStat } from "../../lib/proc/mod.ts";

describe("parseProcStat", () => {
  it("splits after the last parenthesis, so odd command names parse", () => {
    const s = parseProcStat("42 (a) (b c) S 1 40 39 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0");
    expect(s).toMatchObject({ pid: 42, comm: "a) (b c", state: "S", ppid: 1, pgid: 40, sid: 39, startTime: "777" });
  });
  it("refuses text that is not a stat line", () => {
    expect(parseProcStat("")).toBeNull();
    expect(parseProcStat("12 (x) S 1 2")).toBeNull();
    expect(parseProcStat("x (y) S 1 2 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 7 0 0")).toBeNull();
  });
});

describe("process identity on real processes", () => {
  it("reads this process and tells a dead pid from a live one", async () => {
    const me = readProcStat(process.pid);
    expect(me?.pid).toBe(process.pid);
    expect(readCgroup("self")).toMatch(/^\//);
    const child = spawn("sleep", ["30"]);
    const pid = child.pid!;
    const live = inspectPid(pid)!;
    expect(live.startTime).toMatch(/^\d+$/);
    expect(isSameProcess({ pid, startTime: live.startTime })).toBe(true);
    expect(isSameProcess({ pid, startTime: String(Number(live.startTime) + 1) })).toBe(false);
    const exited = new Promise((r) => child.on("exit", r));
    child.kill("SIGKILL");
    await exited;
    expect(inspectPid(pid)).toBeNull();
    expect(isSameProcess({ pid, startTime: live.startTime })).toBe(false);
  });
});
