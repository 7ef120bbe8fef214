import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { groupExists, waitUntil } from "../../lib/kill/process-group.ts";
import { readProcStat } from "../../lib/proc/stat.ts";

/** A shell as the leader of a new group; what it runs is the test's. */
function group(script: string) {
  const child = spawn("/bin/sh", ["-c", script], { detached: true, stdio: ["ignore", "pipe", "ignore"] });
  const lines: string[] = [];
  child.stdout!.setEncoding("utf8").on("data", (d: string) => lines.push(...d.trim().split("\n")));
  return { child, pgid: child.pid!, lines };
}

describe("groupExists", () => {
  it("true while the leader lives, without needing the rest of the group", async () => {
    const g = group("exec sleep 30");
    try {
      await waitUntil(() => readProcStat(g.pgid)?.comm === "sleep", 5000, 5);
      expect(groupExists(g.pgid)).toBe(true);
    } finally {
      process.kill(-g.pgid, "SIGKILL");
    }
    await new Promise((r) => g.child.once("exit", r));
    expect(groupExists(g.pgid)).toBe(false);
  });

  it("a leader that is a zombie does not count; a member it left running does", async () => {
    // The leader starts a member in its group, says its pid, and exits; the member sleeps on.
    const g = group("sleep 30 & echo $!; exit 0");
    await waitUntil(() => g.lines.length > 0, 5000, 5);
    const member = Number(g.lines[0]);
    try {
      // Not reaped yet: the leader is a zombie (its parent, this process, has not waited for it).
      await waitUntil(() => readProcStat(g.pgid)?.state === "Z" || g.child.exitCode !== null, 5000, 5);
      expect(groupExists(g.pgid)).toBe(true);
      await new Promise((r) => (g.child.exitCode !== null ? r(null) : g.child.once("exit", r)));
      expect(readProcStat(g.pgid)).toBeNull();
      expect(groupExists(g.pgid)).toBe(true);
      process.kill(member, "SIGKILL");
      expect(await waitUntil(() => !groupExists(g.pgid), 5000, 5)).toBe(true);
    } finally {
      try {
        process.kill(-g.pgid, "SIGKILL");
      } catch {
        // gone
      }
    }
  });
});
