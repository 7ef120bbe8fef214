import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CgroupV2Placement, cgroupKillRefusal } from "../../lib/placement/cgroup-v2/cgroup-v2.ts";

describe("cgroup-v2's probe on a kernel without cgroup.kill (before 5.14)", () => {
  it("refuses, naming where it looked, the kernel, what would go wrong, and what still works", () => {
    const why = cgroupKillRefusal({ dir: "/sys/fs/cgroup/init.scope", hasKill: false }, "5.10.0-32-amd64");
    expect(why).toMatch(/^no cgroup\.kill in \/sys\/fs\/cgroup\/init\.scope: kernel 5\.10\.0-32-amd64 is older than Linux 5\.14/);
    expect(why).toMatch(/setsid and double-forked children could outlive it/);
    expect(why).toMatch(/systemd-scope still works/);
  });
  it("refuses nothing where cgroup.kill is there, or where no non-root cgroup exists yet to look at", () => {
    expect(cgroupKillRefusal({ dir: "/sys/fs/cgroup/init.scope", hasKill: true }, "6.1.0-28-amd64")).toBeNull();
    expect(cgroupKillRefusal(null, "5.10.0-32-amd64")).toBeNull();
  });
  it("the probe looks below the root when the base is still to be made (the root has no cgroup.kill on any kernel)", async () => {
    // A tree shaped like a 5.10 cgroup fs: interface files, a child cgroup, no cgroup.kill anywhere.
    const mount = mkdtempSync(join(tmpdir(), "outlive-cg510-"));
    try {
      writeFileSync(join(mount, "cgroup.procs"), "");
      writeFileSync(join(mount, "cgroup.controllers"), "cpu memory pids\n");
      mkdirSync(join(mount, "init.scope"));
      writeFileSync(join(mount, "init.scope", "cgroup.procs"), "1\n");
      const probe = await new CgroupV2Placement({ mount, baseDir: join(mount, "outlive") }).probe();
      expect(probe.ok).toBe(false);
      expect(probe.reason).toMatch(/^no cgroup\.kill in .*: kernel .* is older than Linux 5\.14/);

      writeFileSync(join(mount, "init.scope", "cgroup.kill"), "");
      const later = await new CgroupV2Placement({ mount, baseDir: join(mount, "outlive") }).probe();
      expect(later.reason).not.toMatch(/cgroup\.kill/);
    } finally {
      rmSync(mount, { recursive: true, force: true });
    }
  });
});
