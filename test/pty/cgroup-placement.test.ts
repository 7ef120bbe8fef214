import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { CgroupV2Placement, Supervisor } from "../../lib/internal.ts";
import { waitUntil } from "../../lib/kill/process-group.ts";
import { ptyPaths, readPtyInfo } from "../../lib/pty/mod.ts";
import { readProcStat } from "../../lib/proc/stat.ts";
import { removePlacementBase } from "../support/cgroup-base.ts";

const prefix = "outlive-test-pty";
const probe = await new CgroupV2Placement({ prefix }).probe();
if (!probe.ok) console.log(`skipped: PTY task in its own cgroup: ${probe.reason}`);
afterAll(() => removePlacementBase(probe.ok ? String(probe.details.baseDir) : null));

it.skipIf(!probe.ok)("cgroup-v2: the terminal's holder and its session live in the task's cgroup, and a HUP-proof command still ends", async () => {
  const storage = mkdtempSync(join(tmpdir(), "outlive-pty-cg-"));
  const sup = await Supervisor.open({ storage, placement: "cgroup-v2", mode: "daemon", prefix, graceMs: 300, log: () => {} });
  try {
    const t = await sup.run({ id: "held", shell: "trap '' HUP TERM; setsid sleep 300 & echo ready; while :; do sleep 0.05; done", pty: {} });
    expect(await waitUntil(() => /ready/.test(readFileSync(join(storage, "tasks", "held", "io", "stdout"), "utf8")), 5000, 10)).toBe(true);
    const info = readPtyInfo(ptyPaths(join(storage, "tasks", "held")))!;
    const holder = readProcStat(info.pid)!.ppid;
    const cgroupOf = (pid: number) => readFileSync(`/proc/${pid}/cgroup`, "utf8").match(/^0::(.*)$/m)![1];
    expect(cgroupOf(holder)).toBe(t.location.cgroup);
    expect(cgroupOf(info.pid)).toBe(t.location.cgroup);
    const killed = await sup.kill("held");
    expect(killed.how).toBe("kill"); // it ignored the hang-up; KILL, then the cgroup's kill-all
    const gone = (pid: number) => readProcStat(pid) === null || readProcStat(pid)!.state === "Z";
    expect(gone(holder) && gone(info.pid)).toBe(true);
    const procs = join(String(t.location.cgroupDir), "cgroup.procs");
    expect(existsSync(procs) ? readFileSync(procs, "utf8").trim() : "removed").toMatch(/^(|removed)$/);
  } finally {
    await sup.close();
    rmSync(storage, { recursive: true, force: true });
  }
});
