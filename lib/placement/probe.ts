import { findShim, shimChoice } from "../spawn/shim-path.ts";
import { choosePlacement, makePlacements } from "./choose.ts";
import type { PlacementProbe } from "./placement.ts";
import type { PlacementName } from "../store/record/record.ts";

export interface ProbeOptions {
  /** The unit and cgroup name prefix, as `Supervisor.open`'s `prefix`. Default `outlive`. */
  prefix?: string;
  /** Where cgroup-v2 tasks go, as `Supervisor.open`'s `cgroupBase`. Default: found by the placement. */
  cgroupBase?: string;
}

export interface ProbeResult {
  /** Each placement: whether it works here and why (not). */
  probes: PlacementProbe[];
  /** What `placement: "auto"` would choose in each mode, and why. */
  auto: Record<"daemon" | "standalone", { name: PlacementName; reason: string }>;
  /** The process each task runs under: outlive-shim where one is found (its path), else the shell wrapper, and why. */
  shim: { path: string | null; why: string };
}

/**
 * What this machine offers outlive, as `outlive probe` prints it: for every
 * placement whether it works here and why (not), and what `auto` would
 * choose in daemon and in standalone mode, and whether tasks run under
 * outlive-shim or, where none is found, the shell wrapper. Changes nothing.
 *
 * @example
 * ```ts
 * import { probe } from "./probe.ts";
 * const here = await probe();
 * console.log(here.auto.standalone.name); // "process-group"
 * for (const p of here.probes) console.log(p.name, p.ok ? "works" : "does not work", "—", p.reason);
 * ```
 */
export async function probe(options: ProbeOptions = {}): Promise<ProbeResult> {
  const placements = makePlacements(options.prefix ?? "outlive", options.cgroupBase);
  const [daemon, standalone] = await Promise.all([
    choosePlacement(placements, "auto", "daemon"),
    choosePlacement(placements, "auto", "standalone"),
  ]);
  return {
    shim: shimChoice(findShim({ write: false })),
    probes: daemon.probes,
    auto: {
      daemon: { name: daemon.placement.name, reason: daemon.reason },
      standalone: { name: standalone.placement.name, reason: standalone.reason },
    },
  };
}
