import type { HostPreparation } from "./host-preparation.ts";

/**
 * One scenario: what runs inside the container (as the user `outlive`,
 * under its user manager, in a delegated cgroup) and how long it may take.
 * The host side is the same for every scenario (`harness/host/run-in.ts`):
 * boot, run the driver (which judges), read its report, write the report
 * files. `Ctx` is what the steps are handed: the inside's ScenarioContext
 * (harness/inside/define-scenario.ts binds it); the host side, which only
 * reads the rest, sees it as `unknown`, so nothing shared reaches into the
 * inside.
 */
export interface Scenario<Ctx = unknown> {
  /** Also the report directory's name: `harness/reports/<name>-<suite>/`. */
  name: string;
  /** One line: what it shows. */
  summary: string;
  /** The module's runtime. Default `node`. */
  runtime?: "node" | "deno";
  /** Bound on the whole scenario inside the container. Default 90 000 ms. */
  timeoutMs?: number;
  /**
   * Storages on a tmpfs of their own, by label → size (`{ full: "8m" }`):
   * mounted by the host side as root inside the container at the path
   * `ctx.storageFor(label)` returns, owned by the container's user, and
   * unmounted when the driver ends. For scenarios of a full disk.
   */
  tmpfsStorages?: Record<string, string>;
  /**
   * Storages on a file system of the machine's own disk, by label → size
   * (`{ main: "64m" }`): an ext4 image on the machine's root file system,
   * loop-mounted by the host side as root at `ctx.storageFor(label)` with a
   * commit interval of 600 s, and with the kernel's writeback of dirty pages
   * held back as long: a write outlive did not flush is still only in the
   * machine's memory when a power cut comes (`reboot`), which is what makes a
   * missing fsync show. Mounted again after a reboot (the kernel replays the
   * journal, as after any crash); unmounted when the scenario ends.
   */
  diskStorages?: Record<string, string>;
  /**
   * A host reboot in the middle, on an engine that can reboot its machine
   * (`vm`; elsewhere the scenario is skipped with the reason). The steps in
   * `inside` call `await ctx.reboot()` when the moment has come: the host
   * then cuts the power (`power-cut`: qemu's `system_reset`, no sync, within
   * a second) or reboots the machine cleanly (`clean`: `systemctl reboot`,
   * so systemd stops every unit and syncs), waits for it to be ready again,
   * and runs `after` in a new driver, whose checks join those made before.
   * `after` may call `ctx.reboot()` again: each call is one more reboot and
   * one more run of `after` (soak-power cuts the power N times), until a run
   * of `after` ends without asking; `ctx.params.reboots` says how many came.
   */
  reboot?: {
    how: RebootHow;
    after(ctx: Ctx): Promise<void>;
    /**
     * Bound on each reboot, until the machine is ready again, when the run
     * does not set one (`RunInOptions.rebootTimeoutMs`). Default 360 000 ms;
     * a soak that reboots dozens of times on a loaded host needs more.
     */
    timeoutMs?: number;
  };
  /**
   * Set while the scenario shows an open bug (a line, a link): its checks
   * still say what SHOULD happen, a failed one gives the verdict
   * `reproduced`, and all of them holding fails the run ("the bug no longer
   * shows"). Once the bug is fixed, delete this line: the same scenario is
   * then a regression test that passes.
   */
  bug?: string;
  /**
   * What the host makes before the steps, by name (see host-preparation.ts:
   * the containers have no compilers, so a foreign module in Rust is built
   * on the host). Where one cannot be made here, the scenario is skipped
   * with the reason. Default none.
   */
  prepareOnHost?: HostPreparation[];
  /** The steps, inside the container. Record checks with `ctx.check`, skip with `ctx.skip`. */
  inside(ctx: Ctx): Promise<void>;
}

/**
 * How a scenario's `reboot` ends the machine's boot: `power-cut` resets it
 * with no warning and no sync (what a power cut or a kernel panic leaves),
 * `clean` is `systemctl reboot` (every unit stopped, file systems synced).
 */
export type RebootHow = "power-cut" | "clean";

export const DEFAULT_SCENARIO_TIMEOUT_MS = 90_000;

export { ScenarioSkip } from "./skip.ts";
