import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";
import { killCgroup, removeCgroup } from "../placement/cgroup-fs.ts";
import { EXPAND_ENVIRONMENT_SINCE, runBounded, type SystemdManager } from "../placement/systemd-manager.ts";
import type { LiveProcess } from "../proc/identity.ts";

/**
 * Where a placement's spawner lives: outside the supervisor's cgroup, so a
 * kill of that cgroup does not reach it. Made by the placement
 * (`Placement.spawnerHome`); the spawner client only starts, checks and
 * stops what is there.
 */
export interface SpawnerHome {
  /** Where, in words: a unit, a cgroup. */
  readonly where: string;
  /** The `cgroup.procs` the spawner moves itself into first, or null where the home puts it there itself. */
  readonly enter: string | null;
  /** True when this live process runs in the home: half of the spawner's identity check. */
  holds(live: LiveProcess): boolean;
  /**
   * Starts `argv` in the home with `env` (and nothing else of this
   * process's environment), its stderr to `log` where the home has no
   * journal. Resolves once it was started; the spawner says it is ready
   * through its record.
   */
  start(argv: string[], env: Record<string, string>, log: string): Promise<void>;
  /** Ends whatever still runs in the home, and removes the home. Never signals anything outside it. */
  stop(): Promise<void>;
}

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

/** Bound on systemd-run starting the spawner's unit. */
const START_WITHIN_MS = 10_000;

/**
 * A transient service of the spawner's own, `<prefix>-spawner-<key>.service`
 * in the placement's slice: systemd forks it, so it never was in the
 * supervisor's cgroup. Its output goes to the journal.
 */
export class SystemdSpawnerHome implements SpawnerHome {
  readonly where: string;
  readonly enter = null;

  constructor(
    private readonly manager: SystemdManager,
    private readonly unit: string,
    private readonly slice: string,
    private readonly version: number,
  ) {
    this.where = `${manager.kind} unit ${unit}`;
  }

  holds(live: LiveProcess): boolean {
    return live.cgroup !== null && live.cgroup.endsWith(`/${this.unit}`);
  }

  async start(argv: string[], env: Record<string, string>): Promise<void> {
    const expands = this.version < EXPAND_ENVIRONMENT_SINCE;
    // A stopped or failed one of the same name is forgotten first, or systemd-run would say the unit exists.
    await this.manager.systemctl(["reset-failed", this.unit]).catch(() => {});
    await runBounded("systemd-run", [
      ...(this.manager.kind === "user" ? ["--user"] : []),
      `--unit=${this.unit}`,
      `--slice=${this.slice}`,
      "--collect",
      "--quiet",
      ...(expands ? [] : ["--expand-environment=no"]),
      ...Object.entries(env).map(([k, v]) => `--setenv=${k}=${v}`),
      "--",
      ...(expands ? argv.map((a) => a.replaceAll("$", "$$$$")) : argv),
    ], START_WITHIN_MS);
  }

  async stop(): Promise<void> {
    await this.manager.systemctl(["stop", this.unit]).catch(() => {});
    await this.manager.systemctl(["reset-failed", this.unit]).catch(() => {});
  }
}
