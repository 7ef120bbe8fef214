/*
 * The suites, apart from the options: imported by the image and rootfs
 * recipes, which the engines import, so that nothing here reaches back to
 * the engines' table (a cycle: options → engines → vm → vm-image → options).
 */

/** Debian releases a root file system is debootstrapped from: bookworm has systemd 252, trixie 257. */
export type Release = "bookworm" | "trixie";

/**
 * Suites the harness ships against: a Debian release, with its own kernel
 * (every engine but vm uses the host's), or `bookworm-5.10`: bookworm's
 * userland (systemd 252) booted on Debian 11's 5.10 kernel, which has no
 * `cgroup.kill` (Linux 5.14). Only the vm engine boots a kernel of its own,
 * so only it offers that suite.
 */
export type Suite = Release | "bookworm-5.10";
export const SUITES: readonly Suite[] = ["bookworm", "trixie", "bookworm-5.10"];

/** What a suite is made of. */
export interface SuiteSpec {
  /** The release debootstrapped: the rootfs (and its cache entry) is that release's. */
  userland: Release;
  /** Null: the userland's own kernel. Else the Debian release whose `linux-image-amd64` the guest boots instead (vm engine only). */
  kernelFrom: string | null;
}

export const SUITE_SPECS: Record<Suite, SuiteSpec> = {
  bookworm: { userland: "bookworm", kernelFrom: null },
  trixie: { userland: "trixie", kernelFrom: null },
  "bookworm-5.10": { userland: "bookworm", kernelFrom: "bullseye" },
};
