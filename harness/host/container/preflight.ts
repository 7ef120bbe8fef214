import { existsSync, readFileSync } from "node:fs";
import { needsCgroup2Mount } from "./cgroup2-mount.ts";
import { findHostCgroups } from "./host-cgroup.ts";
import { hostEngineMissing } from "./host.ts";
import { probeOci } from "./oci-engine.ts";
import { projectRoot } from "../../shared/project-root.ts";
import { DEFAULTS, type EngineChoice, type EngineName } from "./options.ts";
import { findTool } from "./preconditions.ts";

const NSPAWN_TOOLS = [["systemd-nspawn", "systemd-container"], ["debootstrap", "debootstrap"], ["nsenter", "util-linux"]] as const;

/** Why one engine cannot boot here, or null. Cheap: boots nothing (debootstrap's network is only found out by trying). */
export async function engineMissing(engine: EngineName, nodePath: string = DEFAULTS.nodePath, projectDir = projectRoot()): Promise<string | null> {
  if (engine === "host") return await hostEngineMissing();
  if (typeof process.getuid === "function" && process.getuid() !== 0) return "needs root (uid 0)";
  // podman and docker boot an image made from the same debootstrapped rootfs.
  const tools = engine === "nspawn" ? NSPAWN_TOOLS : NSPAWN_TOOLS.filter(([tool]) => tool === "debootstrap");
  for (const [tool, pkg] of tools) {
    if ((await findTool(tool)) === null) return `${tool} is not installed (Debian package ${pkg}): run container/install-deps.sh`;
  }
  if (!existsSync(nodePath)) return `no Node binary at ${nodePath} to bind into the container`;
  try {
    // A privileged job container with only v1 under a tmpfs gets cgroup v2 mounted at boot.
    if (!needsCgroup2Mount(readFileSync("/proc/self/mountinfo", "utf8"))) findHostCgroups();
  } catch (error) {
    return (error as Error).message;
  }
  if (engine !== "nspawn") {
    const probe = await probeOci(engine, projectDir);
    if (!probe.ok) return probe.reason;
  }
  return null;
}

/**
 * Why a container cannot be booted here with this engine choice, or null
 * when it probably can: for tests and scenarios to skip with the reason
 * printed instead of failing. `auto` needs any one of nspawn, podman, docker.
 *
 * @example
 * ```ts
 * import { cannotRunHereReason } from "./preflight.ts";
 * const why = await cannotRunHereReason();
 * if (why) console.log(`skipped: ${why}`);
 * ```
 */
export async function cannotRunHereReason(nodePath: string = DEFAULTS.nodePath, engine: EngineChoice = "auto"): Promise<string | null> {
  if (engine !== "auto") return await engineMissing(engine, nodePath);
  const reasons: string[] = [];
  for (const candidate of ["nspawn", "podman", "docker"] as const) {
    const why = await engineMissing(candidate, nodePath);
    if (why === null) return null;
    reasons.push(`${candidate}: ${why}`);
    // Without root none of them can run: one reason is enough.
    if (why.startsWith("needs root")) return why;
  }
  return reasons.join("; ");
}
