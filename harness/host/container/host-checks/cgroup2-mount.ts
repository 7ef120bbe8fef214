import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runCommand } from "../command.ts";
import { ContainerError } from "../errors.ts";
import { findHostCgroups, launchCgroupName, type HostCgroups } from "./host-cgroup.ts";

/** Where the harness mounts cgroup v2 when a job container has only v1 controllers under a tmpfs. */
export const JOB_CGROUP2 = "/sys/fs/cgroup/unified";

/** Pure: whether /sys/fs/cgroup is the tmpfs of a v1 layout with no cgroup2 anywhere (what a privileged job container without systemd gets on a hybrid host). */
export function needsCgroup2Mount(mountinfo: string): boolean {
  const mounts = mountinfo.split("\n").map((line) => {
    const [left = "", right = ""] = line.split(" - ");
    return { path: left.split(" ")[4] ?? "", fstype: right.split(" ")[0] ?? "" };
  });
  if (mounts.some((m) => m.fstype === "cgroup2")) return false;
  return mounts.some((m) => m.path === "/sys/fs/cgroup" && m.fstype === "tmpfs");
}

/**
 * In a privileged container whose PID 1 is not systemd (a GitLab job on a
 * hybrid host, `podman run --privileged` without --systemd), nobody mounted
 * cgroup v2; nspawn needs it. Mounts the kernel's v2 hierarchy at
 * /sys/fs/cgroup/unified, as systemd would on such a host, and returns the
 * path, so the last container's teardown can unmount it. Null: not needed.
 */
export async function ensureCgroup2Mount(): Promise<string | null> {
  if (!needsCgroup2Mount(readFileSync("/proc/self/mountinfo", "utf8"))) return null;
  if (!existsSync(JOB_CGROUP2)) mkdirSync(JOB_CGROUP2);
  const r = await runCommand(["mount", "-t", "cgroup2", "none", JOB_CGROUP2], { timeoutMs: 10_000 });
  if (r.exitCode !== 0) {
    throw new ContainerError("no-cgroup-v2", `no cgroup v2 here and mounting one at ${JOB_CGROUP2} failed (${r.stderr.trim()}): a job container must be privileged`);
  }
  return JOB_CGROUP2;
}

/** Unmounts what ensureCgroup2Mount mounted once no container launched by the harness is left under it. */
export async function releaseCgroup2Mount(path: string | null): Promise<string[]> {
  if (path === null || !existsSync(join(path, "cgroup.controllers"))) return [];
  const prefix = launchCgroupName("");
  if (readdirSync(path).some((name) => name.startsWith(prefix))) return [];
  const r = await runCommand(["umount", path], { timeoutMs: 10_000 });
  return r.exitCode === 0 ? [] : [`mount ${path} (${r.stderr.trim()})`];
}

/** findHostCgroups, after mounting cgroup v2 where a job container lacks it. */
export async function hostCgroupsMountingIfNeeded(): Promise<{ host: HostCgroups; mounted: string | null }> {
  const mounted = await ensureCgroup2Mount();
  return { host: findHostCgroups(), mounted };
}
