import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitUntil } from "../../../../lib/kill/process-group.ts";
import { cgroupProcs } from "../../../../lib/internal.ts";
import { ContainerError } from "../errors.ts";

/** Where cgroups live on this host: pure v2 at /sys/fs/cgroup, or hybrid with v2 at /sys/fs/cgroup/unified. */
export interface HostCgroups {
  layout: "unified" | "hybrid";
  /** The cgroup v2 mount point. */
  v2: string;
  /**
   * The legacy name=systemd hierarchy on hybrid hosts. nspawn mirrors the
   * cgroups it makes in v2 there as well, so teardown must remove both.
   */
  v1Systemd: string | null;
}

/** Reads the mount table: the container needs a writable cgroup v2 mount to be started from a cgroup of its own. */
export function findHostCgroups(mountinfo = readFileSync("/proc/self/mountinfo", "utf8")): HostCgroups {
  const mounts = mountinfo.split("\n").map((line) => {
    const [left = "", right = ""] = line.split(" - ");
    const fields = left.split(" ");
    const [fstype = "", , options = ""] = right.split(" ");
    return { path: fields[4] ?? "", fstype, options };
  });
  const v2 = mounts.find((m) => m.fstype === "cgroup2" && m.path === "/sys/fs/cgroup")
    ?? mounts.find((m) => m.fstype === "cgroup2");
  if (!v2) {
    throw new ContainerError("no-cgroup-v2", "no cgroup v2 mount on this host (needs a kernel with cgroup2; mount -t cgroup2 none /sys/fs/cgroup/unified)");
  }
  const v1 = mounts.find((m) => m.fstype === "cgroup" && m.options.split(",").includes("name=systemd"));
  return {
    layout: v2.path === "/sys/fs/cgroup" ? "unified" : "hybrid",
    v2: v2.path,
    v1Systemd: v1 ? v1.path : null,
  };
}

/** The cgroup a container is started from, named after it so two containers never share one. */
export function launchCgroupName(machine: string): string {
  return `outlive-container-${machine}`;
}

/** Every directory of the launch cgroup in every hierarchy nspawn may have touched. */
export function launchCgroupDirs(host: HostCgroups, machine: string): string[] {
  const name = launchCgroupName(machine);
  return [join(host.v2, name), ...(host.v1Systemd ? [join(host.v1Systemd, name)] : [])];
}

export function makeLaunchCgroup(host: HostCgroups, machine: string): string {
  const dir = join(host.v2, launchCgroupName(machine));
  try {
    mkdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") {
      throw new ContainerError("bad-option", `a container named ${machine} already has a cgroup at ${dir}; pick another name or run \`down ${machine}\``);
    }
    throw new ContainerError("no-cgroup-v2", `cannot make a cgroup at ${dir}: ${(error as Error).message}`);
  }
  return dir;
}

/** Directories of a cgroup tree, deepest first (the order rmdir needs). */
export function cgroupTree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const below = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => cgroupTree(join(dir, e.name)));
  return [...below, dir];
}

/** Every pid anywhere in the tree. */
export function cgroupPids(dir: string): number[] {
  return cgroupTree(dir).flatMap(cgroupProcs);
}

/** Kills everything in a v2 tree at once (the kernel's cgroup.kill); falls back to SIGKILL by pid on kernels before 5.14. */
export function killCgroupTree(dir: string): void {
  if (!existsSync(dir)) return;
  const kill = join(dir, "cgroup.kill");
  if (existsSync(kill)) {
    writeFileSync(kill, "1");
    return;
  }
  for (const pid of cgroupPids(dir)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone: that is what we wanted.
    }
  }
}

/** Waits (bounded) until no process is left anywhere in the tree. */
export function waitCgroupEmpty(dir: string, timeoutMs: number): Promise<boolean> {
  return waitUntil(() => cgroupPids(dir).length === 0, timeoutMs, 50);
}

/** rmdir deepest first; returns what could not be removed (still busy). */
export function removeCgroupTree(dir: string): string[] {
  const left: string[] = [];
  for (const d of cgroupTree(dir)) {
    try {
      rmdirSync(d);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") left.push(d);
    }
  }
  return left;
}
