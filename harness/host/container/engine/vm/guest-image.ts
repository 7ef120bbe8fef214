import { createHash } from "node:crypto";
import { closeSync, copyFileSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { readProcStat } from "../../../../../lib/proc/stat.ts";
import { runCommand } from "../../command.ts";
import { ContainerError } from "../../errors.ts";
import { removeTree, unmountUnder } from "../../host-checks/mounts.ts";
import { requireMirror } from "../../image/apt-mirror.ts";
import type { ResolvedOptions } from "../../options.ts";
import { SUITE_SPECS } from "../../image/suites.ts";
import { requireRoot, requireTool } from "../../host-checks/preconditions.ts";
import { ensureRootfs, type Log } from "../../image/rootfs.ts";

/** Packages the guest adds to the rootfs: Debian's kernel (modules and initramfs with it), Debian's guest agent, and e2fsprogs (trixie's debootstrap has none) for `diskStorages`. */
export const VM_PACKAGES: readonly string[] = ["linux-image-amd64", "qemu-guest-agent", "e2fsprogs"];

/** Everything that decides what a guest image contains; its hash names the cache entry beside the rootfs's. */
export interface ImageRecipe {
  /** Bumped when the build steps below change meaning. */
  version: number;
  suite: string;
  /** The rootfs recipe's hash: a rebuilt rootfs makes a new image. */
  rootfsHash: string;
  packages: readonly string[];
  diskMiB: number;
  /** The text of container/vm-setup.sh. */
  setupScript: string;
  /** Only for a suite on an older release's kernel (`SUITE_SPECS`): that release, and the text of container/vm-kernel-from.sh. */
  kernelFrom?: string;
  kernelScript?: string;
}

/** A ready guest image in the cache: a raw ext4 disk and the kernel and initramfs installed in it. */
export interface GuestImage {
  entry: string;
  disk: string;
  kernel: string;
  initrd: string;
  /** Null when it came from the cache; else how long the build took. */
  buildMs: number | null;
}

const BUILDING_PREFIX = ".building-vm-";
const FILES = { disk: "disk.raw", kernel: "vmlinuz", initrd: "initrd.img" } as const;

export function vmSetupScriptPath(projectDir: string): string {
  return join(projectDir, "container", "vm-setup.sh");
}

export function vmKernelScriptPath(projectDir: string): string {
  return join(projectDir, "container", "vm-kernel-from.sh");
}

/** The image recipe for these options on the rootfs of that hash. */
export function imageRecipeFor(options: Pick<ResolvedOptions, "suite" | "vmDiskMiB" | "projectDir">, rootfsHash: string): ImageRecipe {
  const { kernelFrom } = SUITE_SPECS[options.suite];
  return {
    version: 1,
    suite: options.suite,
    rootfsHash,
    packages: VM_PACKAGES,
    diskMiB: options.vmDiskMiB,
    setupScript: readFileSync(vmSetupScriptPath(options.projectDir), "utf8"),
    // Absent for a suite on its own kernel, so those recipes (and their cached images) stay as they were.
    ...(kernelFrom === null ? {} : { kernelFrom, kernelScript: readFileSync(vmKernelScriptPath(options.projectDir), "utf8") }),
  };
}

/**
 * Whether the mirror still serves the release a suite takes its kernel from
 * (Debian moves old releases to its archive): null when it does, else why
 * not, so the suite is skipped with the reason before a build that would
 * fail in apt.
 */
export async function kernelReleaseUnserved(mirror: string, release: string, timeoutMs = 20_000): Promise<string | null> {
  const url = `${mirror.replace(/\/+$/, "")}/dists/${release}/Release`;
  try {
    const r = await fetch(url, { method: "HEAD", signal: AbortSignal.timeout(timeoutMs) });
    return r.ok ? null : `the mirror no longer serves Debian ${release} (${url}: HTTP ${r.status})`;
  } catch (error) {
    return `cannot reach the mirror for Debian ${release} (${url}: ${(error as Error).message})`;
  }
}

/** Pure: `<cacheDir>/<suite>-vm-<hash>`, the hash over the whole recipe. */
export function imageEntryDir(cacheDir: string, recipe: ImageRecipe): string {
  const hash = createHash("sha256").update(JSON.stringify(recipe)).digest("hex").slice(0, 12);
  return join(cacheDir, `${recipe.suite}-vm-${hash}`);
}

/**
 * Pure: whether a disk image holds an ext4 file system where the kernel will
 * look (the superblock's magic 0xEF53 at byte 1080), so a truncated or
 * overwritten image is refused before a boot that would hang in the initramfs.
 */
export function hasExt4Superblock(head: Buffer): boolean {
  return head.length >= 1082 && head.readUInt16LE(1080) === 0xef53;
}

function readHead(path: string): Buffer {
  const fd = openSync(path, "r");
  try {
    const head = Buffer.alloc(2048);
    const n = readSync(fd, head, 0, head.length, 0);
    return head.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/**
 * Checks a finished entry and returns it, or null when there is none for
 * this recipe (then it is built). An entry of this recipe that lacks its
 * kernel or whose disk is not ext4 is refused with one line naming it.
 */
export function readyImage(entry: string, recipe: ImageRecipe): GuestImage | null {
  let written: unknown;
  try {
    written = JSON.parse(readFileSync(join(entry, "recipe.json"), "utf8"));
  } catch {
    return null;
  }
  if (JSON.stringify(written) !== JSON.stringify(recipe)) return null;
  const image = { entry, disk: join(entry, FILES.disk), kernel: join(entry, FILES.kernel), initrd: join(entry, FILES.initrd), buildMs: null };
  if (!existsSync(image.kernel) || !existsSync(image.initrd)) {
    throw new ContainerError("boot-failed", `no kernel in the ${recipe.suite} guest image ${entry} (${FILES.kernel} or ${FILES.initrd} is missing): remove ${entry} and it is rebuilt`);
  }
  if (!existsSync(image.disk) || !hasExt4Superblock(readHead(image.disk))) {
    throw new ContainerError("boot-failed", `the ${recipe.suite} guest image ${image.disk} is corrupt (no ext4 file system in it): remove ${entry} and it is rebuilt`);
  }
  return image;
}

/**
 * The guest image for the suite, built when missing: a copy of the cached
 * debootstrapped rootfs with Debian's kernel and guest agent installed in a
 * chroot (container/vm-setup.sh), then `mkfs.ext4 -d` into a sparse raw
 * disk. Built in a temp dir renamed into place when complete, like the
 * rootfs; the kernel and initramfs are kept beside the disk so qemu boots
 * them directly (no boot loader in the image).
 */
export async function ensureGuestImage(options: ResolvedOptions, log: Log): Promise<GuestImage> {
  const rootfs = await ensureRootfs(options, log);
  const recipe = imageRecipeFor(options, rootfs.hash);
  const entry = imageEntryDir(options.cacheDir, recipe);
  const ready = readyImage(entry, recipe);
  if (ready) return ready;

  requireRoot();
  if (recipe.kernelFrom) {
    const unserved = await kernelReleaseUnserved(requireMirror(options, `the ${recipe.suite} guest image`), recipe.kernelFrom);
    if (unserved) throw new ContainerError("build-failed", `cannot build the ${recipe.suite} guest image: ${unserved}`);
  }
  await requireTool("mkfs.ext4", "e2fsprogs");
  await requireTool("chroot", "coreutils");
  await removeAbandonedImageBuilds(options.cacheDir, log);
  const temp = join(options.cacheDir, `${BUILDING_PREFIX}${basename(entry)}-${process.pid}-${Date.now()}`);
  mkdirSync(temp);
  const started = Date.now();
  log(`building the ${options.suite} guest image in ${temp} (kernel and guest agent from ${options.mirror}, about a minute)`);
  try {
    await build(rootfs.rootfs, temp, recipe, options);
    writeFileSync(join(temp, "recipe.json"), `${JSON.stringify(recipe, null, 2)}\n`);
  } catch (error) {
    const kept = join(options.cacheDir, `failed-${basename(entry)}.log`);
    if (existsSync(join(temp, "build.log"))) copyFileSync(join(temp, "build.log"), kept);
    await removeTree(temp);
    if (error instanceof ContainerError && existsSync(kept)) error.kept.push(kept);
    throw error;
  }
  try {
    renameSync(temp, entry);
  } catch (error) {
    // Another builder finished the same recipe first; theirs is as good as ours.
    if (!readyImage(entry, recipe)) throw error;
    await removeTree(temp);
  }
  const buildMs = Date.now() - started;
  log(`built ${entry} in ${(buildMs / 1000).toFixed(1)} s`);
  return { ...readyImage(entry, recipe)!, buildMs };
}

async function build(rootfs: string, temp: string, recipe: ImageRecipe, options: ResolvedOptions): Promise<void> {
  const root = join(temp, "root");
  const transcript: string[] = [];
  const step = async (argv: string[], timeoutMs: number, what: string) => {
    const r = await runCommand(argv, { timeoutMs, group: "inherit" });
    transcript.push(`$ ${argv.join(" ")}\n${r.stdout}${r.stderr}`);
    writeFileSync(join(temp, "build.log"), transcript.join("\n"));
    if (r.exitCode !== 0) {
      const last = `${r.stdout}${r.stderr}`.trim().split("\n").at(-1) ?? "";
      throw new ContainerError("build-failed", `${what} failed for the ${recipe.suite} guest image (${r.timedOut ? `not done within ${timeoutMs / 1000} s` : `exit ${r.exitCode}`}: ${last})`);
    }
  };
  await step(["cp", "-a", "--reflink=auto", rootfs, root], 120_000, "copying the rootfs");
  copyFileSync(vmSetupScriptPath(options.projectDir), join(root, "tmp", "vm-setup.sh"));
  if (recipe.kernelFrom) copyFileSync(vmKernelScriptPath(options.projectDir), join(root, "tmp", "vm-kernel-from.sh"));
  // apt in the chroot needs a resolver, and dpkg's triggers (the initramfs) want /proc, /sys and /dev.
  const resolv = join(root, "etc", "resolv.conf");
  rmSync(resolv, { force: true });
  copyFileSync("/etc/resolv.conf", resolv);
  try {
    for (const [what, argv] of [
      ["proc", ["mount", "-t", "proc", "proc", join(root, "proc")]],
      ["sys", ["mount", "--bind", "/sys", join(root, "sys")]],
      ["dev", ["mount", "--bind", "/dev", join(root, "dev")]],
    ] as const) await step([...argv], 10_000, `mounting ${what} in the chroot`);
    await step(["chroot", root, "/bin/sh", "/tmp/vm-setup.sh"], options.buildTimeoutMs, "container/vm-setup.sh");
    if (recipe.kernelFrom) {
      await step(["chroot", root, "/bin/sh", "/tmp/vm-kernel-from.sh", recipe.kernelFrom, options.mirror], options.buildTimeoutMs, `container/vm-kernel-from.sh (Debian ${recipe.kernelFrom}'s kernel)`);
    }
  } finally {
    await unmountUnder(root);
  }
  rmSync(join(root, "tmp", "vm-setup.sh"), { force: true });
  rmSync(join(root, "tmp", "vm-kernel-from.sh"), { force: true });
  rmSync(resolv, { force: true });
  const boot = readdirSync(join(root, "boot"));
  const kernels = boot.filter((f) => f.startsWith("vmlinuz-"));
  const kernel = kernels.length === 1 ? kernels[0] : undefined;
  const initrd = kernel && boot.find((f) => f === `initrd.img-${kernel.slice("vmlinuz-".length)}`);
  if (!kernel || !initrd) {
    throw new ContainerError("build-failed", `no kernel in the ${recipe.suite} guest image: ${VM_PACKAGES[0]} left no one /boot/vmlinuz-* with its initrd.img-* (found: ${boot.join(" ") || "nothing"})`);
  }
  copyFileSync(join(root, "boot", kernel), join(temp, FILES.kernel));
  copyFileSync(join(root, "boot", initrd), join(temp, FILES.initrd));
  const disk = join(temp, FILES.disk);
  await step(["truncate", "-s", `${recipe.diskMiB}M`, disk], 10_000, "making the disk");
  await step(["mkfs.ext4", "-q", "-F", "-L", "outlive-root", "-d", root, disk], 300_000, "mkfs.ext4 -d");
  await removeTree(root);
}

/** Temp dirs whose builder pid is gone were interrupted: unmount what the chroot had and remove them. */
async function removeAbandonedImageBuilds(cacheDir: string, log: Log): Promise<void> {
  for (const name of readdirSync(cacheDir)) {
    if (!name.startsWith(BUILDING_PREFIX)) continue;
    const pid = Number(name.split("-").at(-2));
    if (Number.isInteger(pid) && pid > 0 && readProcStat(pid) !== null) continue;
    log(`removing abandoned image build ${name}`);
    await removeTree(join(cacheDir, name));
  }
}
