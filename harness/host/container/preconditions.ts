import { runCommand } from "./command.ts";
import { ContainerError } from "./errors.ts";

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
