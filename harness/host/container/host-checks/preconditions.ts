import { existsSync, readFileSync } from "node:fs";
import { needsCgroup2Mount } from "./cgroup2-mount.ts";
import { runCommand } from "../command.ts";
import { ContainerError } from "../errors.ts";
import { findHostCgroups } from "./host-cgroup.ts";

const INSTALL_HINT = "run container/install-deps.sh as root (apt-get install -y systemd-container debootstrap)";

/** nspawn, debootstrap, chroot and cgroup writes all need root; say so before trying any. */
export function requireRoot(): void {
  if (typeof process.getuid === "function" && process.getuid() !== 0) {
    throw new ContainerError("not-root", `needs root (uid 0), running as uid ${process.getuid()}: run it with sudo or in a root CI job`);
  }
}

/** The path of a tool on PATH, or null (sbin included: root's tools live there). */
export async function findTool(tool: string): Promise<string | null> {
  const r = await runCommand(["sh", "-c", 'command -v "$1"', "sh", tool], {
    timeoutMs: 5_000,
    env: { PATH: `${process.env.PATH ?? ""}:/usr/sbin:/sbin:/usr/bin:/bin` },
  });
  return r.exitCode === 0 ? r.stdout.trim() : null;
}

/** Fails with what is missing and the package that brings it. */
export async function requireTool(tool: string, debianPackage: string): Promise<string> {
  const path = await findTool(tool);
  if (path === null) {
    throw new ContainerError("missing-package", `${tool} is not installed (Debian package ${debianPackage}): ${INSTALL_HINT}`);
  }
  return path;
}

/** A tool an engine runs, and the Debian package that brings it. */
export type ToolNeed = readonly [tool: string, debianPackage: string];

/**
 * Why an engine that boots the debootstrapped rootfs cannot run here, or
 * null: root, its tools, the Node to bind in, and a cgroup v2 hierarchy
 * (a privileged job container with only v1 under a tmpfs gets one mounted
 * at boot, so it passes). Cheap: boots nothing, and debootstrap's network
 * is only found out by trying.
 */
export async function rootfsEngineMissing(tools: readonly ToolNeed[], nodePath: string): Promise<string | null> {
  if (typeof process.getuid === "function" && process.getuid() !== 0) return "needs root (uid 0)";
  for (const [tool, pkg] of tools) {
    if ((await findTool(tool)) === null) return `${tool} is not installed (Debian package ${pkg}): run container/install-deps.sh`;
  }
  if (!existsSync(nodePath)) return `no Node binary at ${nodePath} to bind into the container`;
  try {
    if (!needsCgroup2Mount(readFileSync("/proc/self/mountinfo", "utf8"))) findHostCgroups();
  } catch (error) {
    return (error as Error).message;
  }
  return null;
}
