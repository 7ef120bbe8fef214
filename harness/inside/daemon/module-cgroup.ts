import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { cgroupWritable, killCgroup, removeCgroup } from "../../../lib/placement/cgroup-fs.ts";
import { findCgroup2Mount } from "../../../lib/mod.ts";

/**
 * The cgroup a daemon puts a module in, and kills on a restart. Made fresh
 * under the cgroup v2 mount (or a given parent), removed when done.
 */
export class ModuleCgroup {
  readonly dir: string;

  private constructor(dir: string) {
    this.dir = dir;
  }

  /** Why a module cgroup cannot be made here, or null when it can. */
  static unavailable(parent = findCgroup2Mount()): string | null {
    if (!parent) return "no cgroup v2 hierarchy is mounted";
    const unwritable = cgroupWritable(parent);
    return unwritable ? `cannot make a module cgroup under ${parent} (${unwritable}; run as root)` : null;
  }

  static create(name: string, parent = findCgroup2Mount()): ModuleCgroup {
    if (!parent) throw new Error("no cgroup v2 hierarchy is mounted");
    const dir = join(parent, name);
    mkdirSync(dir, { recursive: true });
    return new ModuleCgroup(dir);
  }

  /** argv prefix that moves the process into this cgroup, then execs the rest. */
  enterArgv(): string[] {
    return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', join(this.dir, "cgroup.procs")];
  }

  /** What the daemon in the field report does on a restart: everything in the cgroup dies by SIGKILL at once. */
  kill(timeoutMs = 5000): Promise<boolean> {
    return killCgroup(this.dir, timeoutMs);
  }

  async remove(): Promise<void> {
    await this.kill();
    await removeCgroup(this.dir);
  }
}
