import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { parsePsOutput, takeSnapshot } from "../../lib/census/mod.ts";
import { splitCmdline } from "../../lib/census/scan/proc-scan.ts";
import { endStarted, started, waitFor } from "./harness-process.ts";

afterEach(() => endStarted());

describe("takeSnapshot from /proc", () => {
  it("sees a real process with its exact argv, spaces and all", async () => {
    // detached: the child leads its own session, so its sid is known. An inherited session
    // reads as 0 when its leader lives outside this pid namespace (as in CI's container).
    const child = spawn("sleep", ["300"], { argv0: "sleep with spaces", stdio: "ignore", detached: true });
    started.add(child.pid!);
    const snap = await takeSnapshot();
    expect(snap.source).toBe("proc");
    expect(snap.complete).toBe(true);
    expect(snap.exactArgv).toBe(true);
    const seen = snap.processes.find((p) => p.pid === child.pid)!;
    expect(seen.argv).toEqual(["sleep with spaces", "300"]);
    expect(seen.ppid).toBe(process.pid);
    expect(seen.startTime).toMatch(/^\d+$/);
    expect(seen.sid).toBe(child.pid);
    expect(seen.pgid).toBe(child.pid);
  });

  it("keeps an empty argument as an empty string", () => {
    expect(splitCmdline("a\0\0b\0")).toEqual(["a", "", "b"]);
    expect(splitCmdline("")).toEqual([]);
    expect(splitCmdline("no-nul")).toEqual(["no-nul"]);
  });

  it("skips a process that vanished, but marks anything else unreadable as incomplete", async () => {
    const root = mkdtempSync(join(tmpdir(), "census-proc-"));
    try {
      for (const name of readdirSync("/proc").filter((n) => /^\d+$/.test(n)).slice(0, 20)) {
        try {
          mkdirSync(join(root, name));
          // copyFile sees /proc files as empty; read and write them instead.
          writeFileSync(join(root, name, "stat"), readFileSync(`/proc/${name}/stat`));
          writeFileSync(join(root, name, "cmdline"), readFileSync(`/proc/${name}/cmdline`));
        } catch {
          rmSync(join(root, name), { recursive: true, force: true });
        }
      }
      // A pid folder with nothing in it is a process that ended mid-scan.
      mkdirSync(join(root, "999990"));
      const whole = await takeSnapshot({ procRoot: root });
      expect(whole.complete).toBe(true);
      expect(whole.processes.some((p) => p.pid === 999990)).toBe(false);

      mkdirSync(join(root, "999991", "stat"), { recursive: true }); // EISDIR: not "gone"
      const broken = await takeSnapshot({ procRoot: root });
      expect(broken.complete).toBe(false);
      expect(broken.problems[0].code).toBe("snapshot-incomplete");
      expect(broken.problems[0].message).toContain("999991");

      mkdirSync(join(root, "999992"));
      writeFileSync(join(root, "999992", "stat"), "garbage");
      writeFileSync(join(root, "999992", "cmdline"), "");
      rmSync(join(root, "999991"), { recursive: true });
      const garbled = await takeSnapshot({ procRoot: root });
      expect(garbled.complete).toBe(false);
      expect(garbled.problems[0].message).toContain("not a stat line");

      const none = await takeSnapshot({ procRoot: join(root, "missing") });
      expect(none.complete).toBe(false);
      expect(none.problems[0].code).toBe("snapshot-failed");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("takeSnapshot through ps", () => {
  it("lists the same live process as /proc, with argv marked inexact", async () => {
    const child = spawn("sleep", ["301"], { stdio: "ignore" });
    started.add(child.pid!);
    await waitFor(async () => (await takeSnapshot()).processes.some((p) => p.pid === child.pid && p.argv[0] === "sleep"));
    const snap = await takeSnapshot({ source: "ps" });
    expect(snap.source).toBe("ps");
    expect(snap.exactArgv).toBe(false);
    expect(snap.complete).toBe(true);
    const seen = snap.processes.find((p) => p.pid === child.pid)!;
    expect(seen).toMatchObject({ ppid: process.pid, argv: ["sleep", "301"], startTime: null, sid: null });
  });

  it("gives an incomplete snapshot when ps cannot run", async () => {
    const snap = await takeSnapshot({ source: "ps", psCommand: "/nonexistent/ps" });
    expect(snap.complete).toBe(false);
    expect(snap.problems[0].code).toBe("snapshot-failed");
  });
});

describe("parsePsOutput", () => {
  it("reads the columns and the state letter", () => {
    const r = parsePsOutput("    1     0     1 Ss   /sbin/init splash\n   42     1    42 Z+   [sh] <defunct>\n    7     2     0 I<\n");
    expect(r.problems).toEqual([]);
    expect(r.processes.map((p) => [p.pid, p.ppid, p.pgid, p.state, p.argv])).toEqual([
      [1, 0, 1, "S", ["/sbin/init", "splash"]],
      [42, 1, 42, "Z", ["[sh]", "<defunct>"]],
      [7, 2, 0, "I", []],
    ]);
  });

  it("makes a line it cannot read a problem, never a silent skip", () => {
    const r = parsePsOutput("  1 0 1 S init\nps: something odd\n");
    expect(r.processes).toHaveLength(1);
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0].code).toBe("snapshot-incomplete");
  });

  it("reads back any well-formed line (property)", () => {
    const word = fc.stringMatching(/^[A-Za-z0-9_./-]{1,12}$/);
    fc.assert(
      fc.property(fc.nat(4_000_000), fc.nat(4_000_000), fc.nat(4_000_000), fc.constantFrom("S", "R", "Ss", "Z+", "D<"), fc.array(word, { maxLength: 6 }), (pid, ppid, pgid, stat, argv) => {
        const line = `${String(pid).padStart(7)} ${String(ppid).padStart(7)} ${String(pgid).padStart(7)} ${stat.padEnd(4)} ${argv.join(" ")}`;
        const r = parsePsOutput(line);
        expect(r.problems).toEqual([]);
        expect(r.processes[0]).toMatchObject({ pid, ppid, pgid, state: stat[0], argv });
      }),
    );
  });
});
