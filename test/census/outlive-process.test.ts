import { describe, expect, it } from "vitest";
import { outliveProcess, outliveProcessTitle } from "../../lib/census/recognise/outlive-process.ts";
import { holderCommand, ptyPaths } from "../../lib/pty/holder.ts";
import { wrapperArgv } from "../../lib/spawn/wrapper.ts";

const wrapper = wrapperArgv({
  command: { argv: ["sleep", "600"] }, enterCgroupProcs: null, deadlineSeconds: 60, graceMs: 2000,
  timedOutFile: "/srv/o/tasks/t-1/io/timed-out", commandPidFile: "/srv/o/tasks/t-1/io/command-pid",
});
const holder = holderCommand({ argv: ["bash", "-i"] }, ptyPaths("/srv/o/tasks/t-2"), { cols: 80, rows: 24 }, {}).argv;

describe("outliveProcess: outlive's own processes, from plain data", () => {
  it("tells the wrapper from its warden (a fork with the same argv) by the parent, else by the group", () => {
    const w = { pid: 5, pgid: 5, argv: wrapper };
    expect(outliveProcess(w, { pid: 1, pgid: 1, argv: ["/sbin/init"] })).toEqual({ role: "wrapper", taskId: "t-1" });
    expect(outliveProcess({ pid: 6, pgid: 5, argv: wrapper }, w)).toEqual({ role: "warden", taskId: "t-1" });
    expect(outliveProcess(w)).toEqual({ role: "wrapper", taskId: "t-1" });
    expect(outliveProcess({ pid: 6, pgid: 5, argv: wrapper })).toEqual({ role: "warden", taskId: "t-1" });
  });

  it("names a PTY task's holder and its terminal", () => {
    expect(outliveProcess({ pid: 7, pgid: 5, argv: holder })).toEqual({ role: "pty holder", taskId: "t-2" });
    const childScript = holder[5];
    expect(outliveProcess({ pid: 8, pgid: 8, argv: ["script", "-qefc", childScript, "/dev/null"] })).toEqual({ role: "pty terminal", taskId: "t-2" });
  });

  it("leaves every other process alone, whatever it runs", () => {
    expect(outliveProcess({ pid: 9, pgid: 5, argv: ["sleep", "600"] })).toBeNull();
    expect(outliveProcess({ pid: 9, pgid: 9, argv: ["/bin/sh", "-c", "echo outlive-task", "sh"] })).toBeNull();
    expect(outliveProcess({ pid: 9, pgid: 9, argv: [] })).toBeNull();
  });

  it("reads as one short line", () => {
    expect(outliveProcessTitle({ role: "wrapper", taskId: "t-1" })).toBe("outlive wrapper of task t-1");
    expect(outliveProcessTitle({ role: "warden", taskId: null })).toBe("outlive warden of a task");
    // A wrapper of an older outlive, or one whose paths name no task, is still outlive's.
    expect(outliveProcess({ pid: 5, pgid: 5, argv: ["/bin/sh", "-c", "old script", "outlive-task", "", "0", "2.000", "/x/timed-out"] }))
      .toEqual({ role: "wrapper", taskId: null });
  });
});
