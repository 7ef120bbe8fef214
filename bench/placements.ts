import { makePlacements, PLACEMENT_NAMES, type PlacementName } from "../lib/internal.ts";

/**
 * The placements that work on this machine, in the order outlive prefers
 * them; each one that does not is printed as skipped, with its reason.
 */
export async function workingPlacements(prefix: string, indent = ""): Promise<PlacementName[]> {
  const placements = makePlacements(prefix, undefined);
  const working: PlacementName[] = [];
  for (const name of PLACEMENT_NAMES as readonly PlacementName[]) {
    const probe = await placements[name].probe();
    if (probe.ok) working.push(name);
    else console.log(`${indent}${name.padEnd(14)} skipped: ${probe.reason}`);
  }
  return working;
}
