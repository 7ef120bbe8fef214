import { OutliveError } from "../errors.ts";
import type { PlacementName } from "../store/record/record.ts";
import { CgroupV2Placement } from "./cgroup-v2/cgroup-v2.ts";
import type { Placement, PlacementProbe } from "./placement.ts";
import { ProcessGroupPlacement } from "./process-group/process-group.ts";
import { SystemdScopePlacement } from "./systemd-scope/systemd-scope.ts";


/**
 * One instance of each placement, for a prefix; the ones given replace the built-in ones.
 *
 * @example
 * ```ts
 * import { makePlacements } from "./choose.ts";
 * import { ProcessGroupPlacement } from "./process-group/process-group.ts";
 * const mine = new ProcessGroupPlacement();
 * const placements = makePlacements("example", undefined, { "process-group": mine });
 * console.log(Object.keys(placements), placements["process-group"] === mine); // ["systemd-scope", "cgroup-v2", "process-group"] true
 * ```
 */
export function makePlacements(
  prefix: string,
  cgroupBase: string | undefined,
  given: Partial<Record<PlacementName, Placement>> = {},
): Record<PlacementName, Placement> {
  return {
    "systemd-scope": given["systemd-scope"] ?? new SystemdScopePlacement({ prefix }),
    "cgroup-v2": given["cgroup-v2"] ?? new CgroupV2Placement({ prefix, baseDir: cgroupBase }),
    "process-group": given["process-group"] ?? new ProcessGroupPlacement(),
  };
}

export interface PlacementChoiceResult {
  placement: Placement;
  /** One line: what was chosen and why. */
  reason: string;
  probes: PlacementProbe[];
}

/**
 * `auto`: in daemon mode the first that works of systemd-scope, cgroup-v2,
 * process-group; in standalone mode process-group (nothing kills the
 * supervisor's cgroup there). A placement asked for by name that cannot
 * work here is an error, never a silent fallback.
 *
 * @example
 * ```ts
 * import { choosePlacement, makePlacements } from "./choose.ts";
 * const choice = await choosePlacement(makePlacements("example", undefined), "auto", "standalone");
 * console.log(choice.placement.name); // "process-group"
 * console.log(choice.probes.map((p) => `${p.name}: ${p.reason}`)); // what each placement says about this machine
 * ```
 */
export async function choosePlacement(
  placements: Record<PlacementName, Placement>,
  requested: "auto" | PlacementName,
  mode: "daemon" | "standalone",
): Promise<PlacementChoiceResult> {
  const order: PlacementName[] = ["systemd-scope", "cgroup-v2", "process-group"];
  const probes = await Promise.all(order.map((name) => placements[name].probe()));
  const probeOf = (name: PlacementName) => probes[order.indexOf(name)];
  if (requested !== "auto") {
    const probe = probeOf(requested);
    if (!probe.ok) {
      throw new OutliveError("E_PLACEMENT_UNAVAILABLE", `The ${requested} placement was asked for but cannot work here: ${probe.reason}`);
    }
    return { placement: placements[requested], reason: `${requested} (asked for): ${probe.reason}`, probes };
  }
  if (mode === "standalone") {
    return {
      placement: placements["process-group"],
      reason: "process-group (auto, standalone mode: nothing kills the supervisor's cgroup, so tasks survive a restart as they are)",
      probes,
    };
  }
  for (const name of order) {
    const probe = probeOf(name);
    if (probe.ok) {
      const skipped = order.slice(0, order.indexOf(name)).map((n) => `${n}: ${probeOf(n).reason}`);
      return {
        placement: placements[name],
        reason: `${name} (auto, daemon mode): ${probe.reason}${skipped.length ? `; not ${skipped.join("; not ")}` : ""}`,
        probes,
      };
    }
  }
  throw new OutliveError("E_PLACEMENT_UNAVAILABLE", "No placement works here");
}
