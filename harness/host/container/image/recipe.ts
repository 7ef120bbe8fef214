import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ResolvedOptions } from "../options.ts";
import { type Release, SUITE_SPECS } from "./suites.ts";

/** Packages on top of debootstrap's minbase: systemd as PID 1, a user bus, logind sessions, ps/pgrep. */
export const PACKAGES: readonly string[] = [
  "systemd",
  "systemd-sysv",
  "dbus",
  "dbus-user-session",
  "libpam-systemd",
  "procps",
  // PTY tasks: script (bsdutils) holds the terminal, setpriv (util-linux) ties it to its holder.
  // Both are Essential and in minbase already; named so no future minbase can drop them unnoticed.
  "bsdutils",
  "util-linux",
];

/** Everything that decides what a root file system contains; its hash names the cache entry. */
export interface Recipe {
  /** Bumped when the build steps in rootfs.ts change meaning. */
  version: number;
  /** The release debootstrapped: suites of one userland (bookworm, bookworm-5.10) share the rootfs. */
  suite: Release;
  variant: "minbase";
  packages: readonly string[];
  mirror: string;
  user: string;
  uid: number;
  /** The text of container/rootfs-setup.sh, so editing it rebuilds. */
  setupScript: string;
}

export function setupScriptPath(projectDir: string): string {
  return join(projectDir, "container", "rootfs-setup.sh");
}

export function recipeFor(options: Pick<ResolvedOptions, "suite" | "mirror" | "user" | "uid" | "projectDir">): Recipe {
  return {
    version: 1,
    suite: SUITE_SPECS[options.suite].userland,
    variant: "minbase",
    packages: PACKAGES,
    mirror: options.mirror,
    user: options.user,
    uid: options.uid,
    setupScript: readFileSync(setupScriptPath(options.projectDir), "utf8"),
  };
}

/** Short, stable hash of a recipe (key order fixed by construction above). */
export function recipeHash(recipe: Recipe): string {
  return createHash("sha256").update(JSON.stringify(recipe)).digest("hex").slice(0, 12);
}

/** `<cacheDir>/<suite>-<hash>`: holds `rootfs/`, `recipe.json` and `build.log`. */
export function cacheEntryDir(cacheDir: string, recipe: Recipe): string {
  return join(cacheDir, `${recipe.suite}-${recipeHash(recipe)}`);
}
