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
