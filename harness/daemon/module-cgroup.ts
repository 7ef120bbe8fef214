import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { cgroupWritable } from "../../lib/placement/cgroup-fs.ts";
import { join } from "node:path";
import { waitUntil } from "../../lib/kill/process-group.ts";
import { findCgroup2Mount } from "../../lib/mod.ts";

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

  populated(): boolean {
    try {
      return /^populated 1$/m.test(readFileSync(join(this.dir, "cgroup.events"), "utf8"));
    } catch {
      return false;
    }
  }

  /** What the daemon in the field report does on a restart: everything in the cgroup dies by SIGKILL at once. */
  async kill(timeoutMs = 5000): Promise<boolean> {
    if (!existsSync(this.dir)) return true;
    writeFileSync(join(this.dir, "cgroup.kill"), "1");
    return waitUntil(() => !this.populated(), timeoutMs, 10);
  }

  async remove(): Promise<void> {
    await this.kill();
    try {
      rmdirSync(this.dir);
    } catch {
      // already gone
    }
  }
}
