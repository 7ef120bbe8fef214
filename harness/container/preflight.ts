import { existsSync } from "node:fs";
import { findHostCgroups } from "./host-cgroup.ts";
import { DEFAULTS } from "./options.ts";
import { findTool } from "./preconditions.ts";

/**
 * Why a container cannot be booted here, or null when it probably can: for
 * tests and scenarios to skip with the reason printed instead of failing.
 * Cheap: checks root, tools and cgroups, boots nothing (the network for
 * debootstrap is only found out by trying).
 *
 * @example
 * ```ts
 * import { cannotRunHereReason } from "./preflight.ts";
 * const why = await cannotRunHereReason();
 * if (why) console.log(`skipped: ${why}`);
 * ```
 */
export async function cannotRunHereReason(nodePath: string = DEFAULTS.nodePath): Promise<string | null> {
  if (typeof process.getuid === "function" && process.getuid() !== 0) return "needs root (uid 0)";
  for (const [tool, pkg] of [["systemd-nspawn", "systemd-container"], ["debootstrap", "debootstrap"], ["nsenter", "util-linux"]] as const) {
    if ((await findTool(tool)) === null) return `${tool} is not installed (Debian package ${pkg}): run container/install-deps.sh`;
  }
  if (!existsSync(nodePath)) return `no Node binary at ${nodePath} to bind into the container`;
  try {
    findHostCgroups();
  } catch (error) {
    return (error as Error).message;
  }
  return null;
}
