import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cgroupProcs, findCgroup2Mount } from "../../lib/internal.ts";

/**
 * The cgroup systemd delegated to the driver's service (`Delegate=yes`):
 * the driver may make module cgroups in it and kill them, as the field's
 * daemon does with its own delegated cgroup.
 *
 * cgroup v2 lets no cgroup hold processes and children with controllers at
 * once (the no-internal-processes rule), so the driver first moves itself
 * into a leaf `driver/`; the service's own cgroup then only has children.
 */
export class DelegatedCgroup {
  /** The service's cgroup directory; module cgroups are made here. */
  readonly dir: string;

  private constructor(dir: string) {
    this.dir = dir;
  }

  /** Finds this process's cgroup and moves the process into `<it>/driver`. Throws with the reason when it cannot. */
  static claim(): DelegatedCgroup {
    const mount = findCgroup2Mount();
    if (!mount) throw new Error("no cgroup v2 hierarchy is mounted in the container");
    const line = readFileSync("/proc/self/cgroup", "utf8").split("\n").find((l) => l.startsWith("0::"));
    if (!line) throw new Error("this process has no cgroup v2 path (/proc/self/cgroup has no 0:: line)");
    const dir = join(mount, line.slice(3));
    const leaf = join(dir, "driver");
    mkdirSync(leaf, { recursive: true });
    // Every process of the service (node has one, plus nothing else) moves down, so the service cgroup is inner only.
    for (const pid of cgroupProcs(dir)) writeFileSync(join(leaf, "cgroup.procs"), String(pid));
    return new DelegatedCgroup(dir);
  }

  /** Sub-cgroups other than the driver's own leaf that are still there (each should have been removed). */
  strays(): string[] {
    if (!existsSync(this.dir)) return [];
    return readdirSync(this.dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name !== "driver")
      .map((e) => join(this.dir, e.name));
  }

  /** Kills and removes every stray module cgroup; returns what it removed. */
  removeStrays(): string[] {
    const removed: string[] = [];
    for (const dir of this.strays()) {
      try {
        writeFileSync(join(dir, "cgroup.kill"), "1");
      } catch {
        // Already empty or gone.
      }
      try {
        rmdirSync(dir);
        removed.push(dir);
      } catch {
        // Still emptying; systemd removes the whole service cgroup when the driver's unit ends.
        removed.push(`${dir} (busy)`);
      }
    }
    return removed;
  }
}
