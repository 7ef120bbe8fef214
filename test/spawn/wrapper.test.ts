import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { waitUntil } from "../../lib/kill/process-group.ts";
import { readProcStat } from "../../lib/internal.ts";
import { TRIM_SCRIPT } from "../../lib/output/mod.ts";
import { wrapperArgv } from "../../lib/spawn/wrapper.ts";
import { groupHasAnyMember } from "../support/group.ts";

function run(argv: string[]): Promise<{ pid: number; code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { detached: true, stdio: ["ignore", "pipe", "inherit", "pipe"] });
    let stdout = "";
    child.stdout!.on("data", (d) => (stdout += d));
    child.once("error", reject);
    child.once("close", (code) => resolve({ pid: child.pid!, code, stdout }));
  });
}

/** Processes whose process group is one of `pgids` and that are not zombies. */
function survivors(pgids: Set<number>): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const s = readProcStat(Number(name));
    if (s && pgids.has(s.pgid) && s.state !== "Z") found.push(s.pid);
  }
  return found;
}

describe("the wrapper", () => {
  it("leaves not even a zombie in its group once it is reaped: it reaps its warden, the warden its sleep (50 runs)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "outlive-wrapper-"));
    const lingering: number[] = [];
    for (let i = 0; i < 50; i++) {
      const argv = wrapperArgv({ command: { argv: ["true"] }, enterCgroupProcs: null, deadlineSeconds: 86_000, graceMs: 100, timedOutFile: join(dir, `timed-out-${i}`) });
      const { pid } = await run(argv);
      // Asked at once, as the supervisor does when the exit event comes: an orphan left to PID 1 would still be here.
      if (groupHasAnyMember(pid)) lingering.push(pid);
    }
    rmSync(dir, { recursive: true, force: true });
    expect(lingering).toEqual([]);
  });

  it("leaves no warden behind when the command ends at once (200 runs)", async () => {
    const pgids = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const argv = wrapperArgv({ command: { argv: ["true"] }, enterCgroupProcs: null, deadlineSeconds: 86_000, graceMs: 100, timedOutFile: "/dev/null" });
      pgids.add((await run(argv)).pid);
    }
    // Each wrapper ends its warden as its command ends; a busy machine may run the wardens' ends late,
    // so the look waits for them (a fixed 300 ms was a guess), and a warden still there after 10 s is one left behind.
    await waitUntil(() => survivors(pgids).length === 0, 10_000, 20);
    const left = survivors(pgids);
    for (const pid of left) process.kill(pid, "SIGKILL");
    expect(left).toEqual([]);
  });

  it("the warden ends the task at its deadline and marks it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "outlive-wrapper-"));
    const marker = join(dir, "timed-out");
    const argv = wrapperArgv({ command: { shell: "trap 'echo term; exit 143' TERM; sleep 30 & wait" }, enterCgroupProcs: null, deadlineSeconds: 1, graceMs: 500, timedOutFile: marker });
    const started = Date.now();
    const r = await run(argv);
    // The command alone would run 30 s.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(r.stdout).toBe("term\n");
    expect(readFileSync(marker, "utf8")).toBe("");
    rmSync(dir, { recursive: true, force: true });
  });

  it("a task with a deadline and a bound costs the wrapper, one warden with one sleep, and the command", async () => {
    const dir = mkdtempSync(join(tmpdir(), "outlive-wrapper-"));
    const argv = wrapperArgv({
      command: { argv: ["sleep", "5"] },
      enterCgroupProcs: null,
      deadlineSeconds: 86_000,
      graceMs: 100,
      timedOutFile: join(dir, "timed-out"),
      trim: { script: TRIM_SCRIPT, maxBytes: 4096 },
    });
    const child = spawn(argv[0], argv.slice(1), { detached: true, stdio: ["ignore", "ignore", "inherit", "pipe"] });
    const closed = new Promise((r) => child.once("close", r));
    try {
      // Past the first naps, into the backoff: still one sleep at a time. A nap's sleep may end between
      // listing the group and reading its cmdline, so each look reads what is still there, and the group
      // is looked at until it has its whole shape (the warden between two naps has no sleep for a moment).
      await new Promise((r) => setTimeout(r, 700));
      let members: string[][] = [];
      for (let look = 0; look < 50; look++) {
        members = survivors(new Set([child.pid!])).flatMap((pid) => {
          try {
            const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").slice(0, -1);
            // Empty: it ended after survivors() read its state, and is a zombie until the warden reaps it.
            return argv.length > 0 ? [argv] : [];
          } catch {
            return [];
          }
        });
        const others = members.filter((a) => a[3] !== "outlive-task");
        // Never two naps at once, on any look.
        expect(others.length).toBeLessThanOrEqual(2);
        if (others.length === 2) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const wrappers = members.filter((a) => a[3] === "outlive-task");
      expect(wrappers.length).toBe(2);
      expect(members.filter((a) => a[3] !== "outlive-task").map((a) => a[0]).sort()).toEqual(["sleep", "sleep"]);
    } finally {
      process.kill(-child.pid!, "SIGKILL");
      await closed;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the warden keeps its deadline while it trims: naps do not add up", async () => {
    const dir = mkdtempSync(join(tmpdir(), "outlive-wrapper-"));
    const marker = join(dir, "timed-out");
    const argv = wrapperArgv({
      command: { shell: "trap 'echo term; exit 143' TERM; sleep 30 & wait" },
      enterCgroupProcs: null,
      deadlineSeconds: 2,
      graceMs: 300,
      timedOutFile: marker,
      trim: { script: TRIM_SCRIPT, maxBytes: 4096 },
    });
    const started = Date.now();
    const r = await run(argv);
    const took = Date.now() - started;
    // The TERM at 2 s ends the command and its sleep, not a nap later.
    expect(took).toBeGreaterThanOrEqual(2000);
    expect(took).toBeLessThan(2500);
    expect(r.stdout).toBe("term\n");
    expect(readFileSync(marker, "utf8")).toBe("");
    expect(r.code).toBe(143);
    rmSync(dir, { recursive: true, force: true });
  });

  it("passes any argv through unchanged (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.string({ unit: "grapheme", maxLength: 12 }).filter((s) => !s.includes("\0")), { maxLength: 6 }), async (args) => {
        const argv = wrapperArgv({
          command: { argv: ["sh", "-c", 'for a in "$@"; do printf "%s\\0" "$a"; done', "sh", ...args] },
          enterCgroupProcs: null,
          deadlineSeconds: 0,
          graceMs: 100,
          timedOutFile: "/dev/null",
        });
        const r = await run(argv);
        expect(r.code).toBe(0);
        expect(r.stdout.split("\0").slice(0, -1)).toEqual(args);
      }),
      { numRuns: 40 },
    );
  });
});

/** The wrapper with its stderr and its exit marker (fd 3) caught, as the task's files would hold them. */
function runCaught(argv: string[], onStart?: (pid: number) => void): Promise<{ code: number | null; stderr: string; marker: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { detached: true, stdio: ["ignore", "ignore", "pipe", "pipe"] });
    let stderr = "";
    let marker = "";
    child.stderr!.on("data", (d) => (stderr += d));
    (child.stdio[3] as NodeJS.ReadableStream).on("data", (d) => (marker += d));
    child.once("error", reject);
    child.once("spawn", () => onStart?.(child.pid!));
    child.once("close", (code) => resolve({ code, stderr, marker }));
  });
}

describe("the wrapper and the task's output", () => {
  it("writes the command's own pid before it execs it, and nothing into stderr when the command dies of TERM", async () => {
    const dir = mkdtempSync(join(tmpdir(), "outlive-wrapper-"));
    const pidFile = join(dir, "command-pid");
    const argv = wrapperArgv({ command: { argv: ["sleep", "30"] }, enterCgroupProcs: null, deadlineSeconds: 86_000, graceMs: 100, timedOutFile: join(dir, "timed-out"), commandPidFile: pidFile });
    let commandPid = 0;
    const r = await runCaught(argv, async () => {
      const cmd = () => { try { return readFileSync(`/proc/${Number(readFileSync(pidFile, "utf8"))}/cmdline`, "utf8"); } catch { return ""; } };
      await waitUntil(() => cmd() === "sleep\u000030\u0000", 10_000, 5);
      commandPid = Number(readFileSync(pidFile, "utf8"));
      process.kill(commandPid, "SIGTERM");
    });
    expect(commandPid).toBeGreaterThan(0);
    expect(r).toEqual({ code: 143, stderr: "", marker: "143\n" });
    rmSync(dir, { recursive: true, force: true });
  });

  it("a TERM to the whole group while the system is not stopping leaves its exit code and no io/host-stopping", async () => {
    const dir = mkdtempSync(join(tmpdir(), "outlive-wrapper-"));
    const pidFile = join(dir, "command-pid");
    const argv = wrapperArgv({ command: { argv: ["sleep", "30"] }, enterCgroupProcs: null, deadlineSeconds: 0, graceMs: 100, timedOutFile: join(dir, "timed-out"), commandPidFile: pidFile });
    const r = await runCaught(argv, async (pid) => {
      await waitUntil(() => { try { return readFileSync(`/proc/${Number(readFileSync(pidFile, "utf8"))}/cmdline`, "utf8") === "sleep\u000030\u0000"; } catch { return false; } }, 10_000, 5);
      // As outlive's kill and systemd's stop of a scope do: the wrapper gets the TERM too.
      process.kill(-pid, "SIGTERM");
    });
    expect(r).toEqual({ code: 143, stderr: "", marker: "143\n" });
    // Only `stopping` from systemd makes the file; on this machine systemd is not stopping (or not PID 1).
    expect(readdirSync(dir).sort()).toEqual(["command-pid", "ended"]);
    rmSync(dir, { recursive: true, force: true });
  });

  it("says in one line of its own, with no line number, that a program vanished after the lookup (127)", async () => {
    const argv = wrapperArgv({ command: { argv: ["/no/such/binary", "x"] }, enterCgroupProcs: null, deadlineSeconds: 0, graceMs: 100, timedOutFile: "/dev/null" });
    expect(await runCaught(argv)).toEqual({ code: 127, stderr: "outlive: /no/such/binary: not found\n", marker: "127\n" });
  });
});
