import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { cgroupWritable, removeCgroup } from "../../../lib/placement/cgroup-fs.ts";
import { findCgroup2Mount } from "../../../lib/internal.ts";
import { killModuleCgroup, type ModuleKillChoice, type ModuleKillResult } from "./module-kill.ts";

/**
 * The cgroup a daemon puts a module in, and kills on a restart. Made fresh
 * under the cgroup v2 mount (or a given parent), removed when done.
 */
export class ModuleCgroup {
  readonly dir: string;
  readonly killChoice: ModuleKillChoice;

  private constructor(dir: string, killChoice: ModuleKillChoice) {
    this.dir = dir;
    this.killChoice = killChoice;
  }

  /** Why a module cgroup cannot be made here, or null when it can. */
  static unavailable(parent = findCgroup2Mount()): string | null {
    if (!parent) return "no cgroup v2 hierarchy is mounted";
    const unwritable = cgroupWritable(parent);
    return unwritable ? `cannot make a module cgroup under ${parent} (${unwritable}; run as root)` : null;
  }

  static create(name: string, parent = findCgroup2Mount(), killChoice: ModuleKillChoice = "auto"): ModuleCgroup {
    if (!parent) throw new Error("no cgroup v2 hierarchy is mounted");
    const dir = join(parent, name);
    mkdirSync(dir, { recursive: true });
    return new ModuleCgroup(dir, killChoice);
  }

  /** argv prefix that moves the process into this cgroup, then execs the rest. */
  enterArgv(): string[] {
    return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', join(this.dir, "cgroup.procs")];
  }

  /**
   * What the daemon in the field report does on a restart: everything in the
   * cgroup dies by SIGKILL at once (`cgroup.kill`; on a kernel without it,
   * freeze, SIGKILL each pid, thaw: module-kill.ts).
   */
  kill(timeoutMs = 5000): Promise<ModuleKillResult> {
    return killModuleCgroup(this.dir, this.killChoice, timeoutMs);
  }

  async remove(): Promise<void> {
    await this.kill().catch(() => {});
    await removeCgroup(this.dir);
  }
}
