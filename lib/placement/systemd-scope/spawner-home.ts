import type { LiveProcess } from "../../proc/identity.ts";
import type { SpawnerHome } from "../spawner-home.ts";
import { EXPAND_ENVIRONMENT_SINCE, runBounded, type SystemdManager } from "./systemd-manager.ts";

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
