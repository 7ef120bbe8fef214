import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { readProcStat } from "../../../../lib/proc/stat.ts";
import { runCommand } from "../command.ts";
import { ContainerError } from "../errors.ts";
import { requireMirror } from "./apt-mirror.ts";
import type { ResolvedOptions } from "../options.ts";
import { requireRoot, requireTool } from "../host-checks/preconditions.ts";
import { checkCacheDir } from "./cache-dir.ts";
import { PACKAGES, cacheEntryDir, recipeFor, recipeHash, setupScriptPath, type Recipe } from "./recipe.ts";
import { removeTree } from "../host-checks/mounts.ts";

/** A ready root file system in the cache. */
export interface CachedRootfs {
  /** The directory nspawn boots (`<entry>/rootfs`). */
  rootfs: string;
  entry: string;
  hash: string;
  /** Null when it came from the cache; else how long the cold build took. */
  buildMs: number | null;
}

export type Log = (line: string) => void;

/** Temp dirs are named after the builder's pid, so a later build can tell an abandoned one from a running one. */
const BUILDING_PREFIX = ".building-";

/**
 * A finished entry built from this very recipe: its recipe.json says so, not
 * its name alone (an entry some other outlive left under the name is rebuilt).
 */
export function isReady(entry: string, recipe: Recipe, hash: string): boolean {
  let written: unknown;
  try {
    written = JSON.parse(readFileSync(join(entry, "recipe.json"), "utf8"));
  } catch {
    return false;
  }
  if (JSON.stringify(written) !== JSON.stringify({ ...recipe, hash })) return false;
  return existsSync(join(entry, "rootfs", "usr", "lib", "systemd", "systemd"));
}

/**
 * Returns the cached root file system for the recipe, building it first if
 * needed. The build happens in a temp dir that is renamed into place only
 * when complete, so an interrupted or concurrent build never leaves a
 * half-built entry where a reader would take it for a good one.
 */
export async function ensureRootfs(options: ResolvedOptions, log: Log = () => {}): Promise<CachedRootfs> {
  const recipe = recipeFor(options);
  const entry = cacheEntryDir(options.cacheDir, recipe);
  const hash = recipeHash(recipe);
  // Checked before a cached entry is used too: a root file system others could change boots as root.
  checkCacheDir(options.cacheDir);
  if (isReady(entry, recipe, hash)) return { rootfs: join(entry, "rootfs"), entry, hash, buildMs: null };

  requireRoot();
  requireMirror(options, `the ${recipe.suite} root file system`);
  await requireTool("debootstrap", "debootstrap");
  await requireTool("chroot", "coreutils");
  await removeAbandonedBuilds(options.cacheDir, log);

  const temp = join(options.cacheDir, `${BUILDING_PREFIX}${basename(entry)}-${process.pid}-${Date.now()}`);
  mkdirSync(temp);
  const started = Date.now();
  log(`building ${recipe.suite} root file system in ${temp} (debootstrap, about a minute or two)`);
  try {
    await debootstrap(recipe, temp, options.buildTimeoutMs);
    await setUp(recipe, options, temp);
    writeFileSync(join(temp, "recipe.json"), `${JSON.stringify({ ...recipe, hash }, null, 2)}\n`);
  } catch (error) {
    await keepLogAndRemove(temp, options.cacheDir, entry, error);
    throw error;
  }
  try {
    renameSync(temp, entry);
  } catch (error) {
    // Another builder finished the same recipe first; theirs is as good as ours.
    if (!isReady(entry, recipe, hash)) throw error;
    await removeTree(temp);
    log(`another build of ${basename(entry)} finished first; using it`);
    return { rootfs: join(entry, "rootfs"), entry, hash, buildMs: Date.now() - started };
  }
  const buildMs = Date.now() - started;
  log(`built ${entry} in ${(buildMs / 1000).toFixed(1)} s`);
  return { rootfs: join(entry, "rootfs"), entry, hash, buildMs };
}

async function debootstrap(recipe: Recipe, temp: string, timeoutMs: number): Promise<void> {
  const argv = [
    "debootstrap",
    `--variant=${recipe.variant}`,
    `--include=${PACKAGES.join(",")}`,
    recipe.suite,
    join(temp, "rootfs"),
    recipe.mirror,
  ];
  const r = await runCommand(argv, { timeoutMs, group: "inherit" });
  writeFileSync(join(temp, "build.log"), `$ ${argv.join(" ")}\n${r.stdout}${r.stderr}`);
  if (r.timedOut) {
    throw new ContainerError("build-failed", `debootstrap ${recipe.suite} did not finish within ${timeoutMs / 1000} s (slow or no access to ${recipe.mirror}?)`);
  }
  if (r.exitCode !== 0) {
    const last = `${r.stdout}${r.stderr}`.trim().split("\n").slice(-1)[0] ?? "";
    throw new ContainerError(
      "build-failed",
      `debootstrap ${recipe.suite} failed (exit ${r.exitCode}: ${last}); it needs access to ${recipe.mirror}`,
    );
  }
}

/** The same setup script the Containerfile runs, here through chroot (offline, no systemd needed). */
async function setUp(recipe: Recipe, options: ResolvedOptions, temp: string): Promise<void> {
  const rootfs = join(temp, "rootfs");
  copyFileSync(setupScriptPath(options.projectDir), join(rootfs, "tmp", "rootfs-setup.sh"));
  const r = await runCommand(["chroot", rootfs, "/bin/sh", "/tmp/rootfs-setup.sh", recipe.user, String(recipe.uid)], {
    timeoutMs: 120_000,
  });
  await runCommand(["rm", "-f", join(rootfs, "tmp", "rootfs-setup.sh")], { timeoutMs: 10_000 });
  writeFileSync(join(temp, "setup.log"), `${r.stdout}${r.stderr}`);
  if (r.exitCode !== 0) {
    throw new ContainerError("build-failed", `container/rootfs-setup.sh failed in the ${recipe.suite} root file system (exit ${r.exitCode}): ${r.stderr.trim()}`);
  }
}

/** Keeps the build log next to the cache (a person needs it) and removes the half-built tree. */
async function keepLogAndRemove(temp: string, cacheDir: string, entry: string, error: unknown): Promise<void> {
  const kept = join(cacheDir, `failed-${basename(entry)}.log`);
  for (const name of ["build.log", "setup.log"]) {
    if (existsSync(join(temp, name))) copyFileSync(join(temp, name), name === "build.log" ? kept : `${kept}.setup`);
  }
  await removeTree(temp);
  if (error instanceof ContainerError && existsSync(kept)) error.kept.push(kept);
}

/** Temp dirs whose builder pid is gone were interrupted: unmount what debootstrap mounted and remove them. */
async function removeAbandonedBuilds(cacheDir: string, log: Log): Promise<void> {
  for (const name of readdirSync(cacheDir)) {
    if (!name.startsWith(BUILDING_PREFIX)) continue;
    const pid = Number(name.split("-").at(-2));
    if (Number.isInteger(pid) && pid > 0 && readProcStat(pid) !== null) continue;
    log(`removing abandoned build ${name}`);
    await removeTree(join(cacheDir, name));
  }
}
