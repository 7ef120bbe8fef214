import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";
import type { LiveProcess } from "../../proc/identity.ts";
import { killCgroup, removeCgroup } from "../cgroup-fs.ts";
import type { SpawnerHome } from "../spawner-home.ts";

/**
 * A cgroup of the spawner's own, beside the placement's task cgroups (not
 * in their base, which stays removable). The supervisor forks the spawner,
 * which moves itself in before it takes a request; a kill of the
 * supervisor's cgroup before that ends a spawner that has no request yet.
 */
export class CgroupSpawnerHome implements SpawnerHome {
  readonly where: string;
  readonly enter: string;

  constructor(readonly dir: string, private readonly cgroup: string) {
    this.where = `cgroup ${dir}`;
    this.enter = join(dir, "cgroup.procs");
  }

  holds(live: LiveProcess): boolean {
    return live.cgroup === this.cgroup;
  }

  async start(argv: string[], env: Record<string, string>, log: string): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    const fd = openSync(log, "a", 0o600);
    try {
      const child = spawn(argv[0], argv.slice(1), { detached: true, env, stdio: ["ignore", fd, fd], cwd: "/" });
      await new Promise<void>((resolve, reject) => {
        child.once("spawn", resolve);
        child.once("error", reject);
      });
      child.unref();
    } finally {
      closeSync(fd);
    }
  }

  async stop(): Promise<void> {
    await killCgroup(this.dir);
    await removeCgroup(this.dir, 2000).catch(() => false);
  }
}
