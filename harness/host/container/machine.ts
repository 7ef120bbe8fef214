import type { CommandResult } from "./command.ts";
import type { EngineName } from "./options.ts";

/** Run as this identity inside (nspawn: nsenter's setuid/setgid; docker/podman: exec --user). */
export interface EnterIdentity {
  uid: number;
  gid: number;
}

export interface EnterOptions {
  timeoutMs: number;
  input?: string;
  as?: EnterIdentity;
}

/** What teardown found and did; `clean` is false when anything is left (listed in `leftovers`). */
export interface TeardownReport {
  /** `halted`: the container shut down when asked; `killed`: it had to be killed; `gone`: it was not running. */
  stopped: "halted" | "killed" | "gone";
  leftovers: string[];
  clean: boolean;
  ms: number;
}

/**
 * The one seam between the harness and an engine: nspawn, docker and podman
 * each fill it, and everything above (systemd-run, readiness, journal) is
 * built on `enter` alone.
 */
export interface Machine {
  readonly engine: EngineName;
  readonly name: string;
  /**
   * Runs an argv in the container's namespaces, as root unless `as` says
   * otherwise. It is NOT in the container's cgroup tree (nsenter cannot put
   * it there), so use it for systemctl, systemd-run and journalctl; run
   * workloads through systemd-run so the container's systemd owns them.
   */
  enter(argv: string[], options: EnterOptions): Promise<CommandResult>;
  /** Whether the container still runs. */
  isAlive(): Promise<boolean>;
  /** Stops the container (orderly first, bounded) and removes what the engine left on the host. */
  stop(timeoutMs: number): Promise<TeardownReport>;
}
