import type { RebootHow } from "../../shared/define.ts";
import type { CommandResult } from "./command.ts";
import type { EngineName } from "./engine-names.ts";
import type { ResolvedOptions } from "./options.ts";
import type { Log } from "./image/rootfs.ts";
import type { ContainerState } from "./state.ts";

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

export type { RebootHow };

/** What teardown found and did; `clean` is false when anything is left (listed in `leftovers`). */
export interface TeardownReport {
  /** `halted`: the container shut down when asked; `killed`: it had to be killed; `gone`: it was not running. */
  stopped: "halted" | "killed" | "gone";
  leftovers: string[];
  clean: boolean;
  ms: number;
  /**
   * Present when the engine asked the container to halt (nspawn): the bound it gave the halt, and what the
   * container's PID 1 was running when that bound ran out (`systemd-shutdow`: its final stage; `gone`), or
   * null when it halted in time.
   */
  halt?: { boundMs: number; stageAtBound: string | null };
}

/**
 * The one seam between the harness and a running container: every engine's
 * machine fills it, and everything above (systemd-run, readiness, journal)
 * is built on `enter` alone.
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
  /**
   * Reboots the machine (only engines with a kernel of their own: vm) and
   * resolves once it answers again from its next boot, with the host's
   * folders shared again; systemd may not be up yet (the caller waits for it).
   * `issuedAt`: when the reset or the reboot was sent (epoch ms); `resets`:
   * why each further reset was sent, when the new boot stalled (none as a rule).
   */
  reboot?(how: RebootHow, timeoutMs: number): Promise<{ issuedAt: number; resets?: string[] }>;
  /**
   * Does ahead what a reboot needs before it can send the reset (reads the
   * boot id it compares against, sets the machine's reboot action), so that
   * a reboot asked for later is sent within moments of the ask.
   */
  prepareReboot?(): Promise<void>;
  /**
   * Undoes what prepareReboot set once the scenario that could reboot has
   * ended (vm: a guest that reboots or panics by itself ends qemu again, so
   * the scenarios after it meet a machine that says it died, not one that
   * came back from a boot nobody asked for).
   */
  endReboots?(): Promise<void>;
  /** The machine's console as logged so far (the vm engine's serial console: every boot, the shutdowns between), where there is one. */
  consoleLog?(): string;
  /**
   * What the machine said last, a few lines for a person reading why a
   * scenario's driver ended without a report (the vm engine: whether qemu
   * has exited, and its console's last lines: a guest that panicked or
   * rebooted ends qemu, and a clean teardown removes the console after).
   */
  lastWords?(): Promise<string[]>;
}

/**
 * What an engine is to the harness, as systemd's unit types fill one
 * table: every engine fills it, and `ENGINES` (engines.ts) lists them by
 * name; what each is in plain facts (auto, bootsSuite, its boot bound) is
 * in engine-names.ts. Nothing above asks which engine it holds.
 */
export interface Engine {
  /** Builds (or finds in the cache) what it boots beyond the rootfs, for `cli.ts build --engine E`; says where it is. */
  prepare?(options: ResolvedOptions, log: Log): Promise<string>;
  /** How it would run here, one line, when it can (the vm engine: KVM or TCG, and why). */
  howItRuns?(options: ResolvedOptions): Promise<string>;
  /** Why it cannot boot here, or null when it probably can. Cheap: boots nothing. */
  missing(nodePath: string, projectDir: string): Promise<string | null>;
  /**
   * Boots a machine (systemd may not be up yet; the caller waits for it)
   * and says when it was launched: what came before (building a root file
   * system or an image) is not part of the boot time.
   */
  boot(options: ResolvedOptions, log: Log): Promise<{ machine: Machine; launchedAt: number }>;
  /** The machine of a container another process booted (`cli.ts exec|down NAME`), from its saved state. */
  attach(state: ContainerState): Machine;
}
