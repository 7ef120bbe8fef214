import { copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { bootContainer, ContainerError, describeFailure, resolveOptions } from "../../harness/host/container/mod.ts";
import { mountsUnder } from "../../harness/host/container/host-checks/mounts.ts";
import { engineMissing } from "../../harness/host/container/host-checks/preflight.ts";
import { cacheEntryDir, recipeFor } from "../../harness/host/container/image/recipe.ts";
import { ensureGuestImage, imageEntryDir, imageRecipeFor } from "../../harness/host/container/engine/vm/guest-image.ts";
import { ensureRootfs } from "../../harness/host/container/image/rootfs.ts";

const vmMissing = await engineMissing("vm");
if (vmMissing) console.log(`test/container/vm-bad-input: skipping: ${vmMissing}`);

/** What a failed boot must not leave: a process naming the cache, an overlay, a socket, a mount. */
function leftIn(cache: string): string[] {
  const left: string[] = [];
  for (const p of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${p}/cmdline`, "utf8").includes(cache)) left.push(`pid ${p}`);
    } catch {
      // gone meanwhile
    }
  }
  const runs = join(cache, "runs");
  for (const run of existsSync(runs) ? readdirSync(runs) : []) {
    for (const f of readdirSync(join(runs, run))) if (f !== "boot-console.log") left.push(join(runs, run, f));
  }
  return [...left, ...mountsUnder(cache)];
}

async function failure(promise: Promise<unknown>): Promise<{ error: ContainerError; line: string }> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(ContainerError);
  const { line } = describeFailure(error);
  expect(line).not.toContain("\n");
  return { error: error as ContainerError, line };
}

describe.skipIf(vmMissing !== null)("--engine vm: bad input is one line, and nothing is left", () => {
  let real: { rootfsEntry: string; image: { entry: string; disk: string; kernel: string; initrd: string } };
  let cache = "";

  beforeAll(async () => {
    const options = resolveOptions({ suite: "bookworm", engine: "vm" });
    const rootfs = await ensureRootfs(options);
    real = { rootfsEntry: rootfs.entry, image: await ensureGuestImage(options, () => {}) };
  }, 20 * 60_000);

  afterEach(() => {
    if (cache) rmSync(cache, { recursive: true, force: true });
    cache = "";
  });

  /** A cache of its own: the real rootfs entry linked in, and an image entry made of `files` (links to the real ones, or made here). */
  function cacheWithImage(files: Record<string, "link" | ((path: string) => void)>): string {
    cache = mkdtempSync(join(tmpdir(), "outlive-vm-bad-"));
    const options = resolveOptions({ suite: "bookworm", engine: "vm", cacheDir: cache });
    symlinkSync(real.rootfsEntry, cacheEntryDir(cache, recipeFor(options)));
    const entry = imageEntryDir(cache, imageRecipeFor(options, basename(real.rootfsEntry).split("-").at(-1)!));
    mkdirSync(entry);
    copyFileSync(join(real.image.entry, "recipe.json"), join(entry, "recipe.json"));
    for (const [name, how] of Object.entries(files)) {
      if (how === "link") linkSync(join(real.image.entry, name), join(entry, name));
      else how(join(entry, name));
    }
    return cache;
  }

  it("no qemu", async () => {
    cache = mkdtempSync(join(tmpdir(), "outlive-vm-bad-"));
    const { error, line } = await failure(bootContainer({ engine: "vm", cacheDir: cache, qemuCommand: "/nonexistent/qemu-system-x86_64" }, () => {}));
    expect(error.code).toBe("missing-package");
    expect(line).toMatch(/\/nonexistent\/qemu-system-x86_64 is not installed \(Debian package qemu-system-x86\)/);
    expect(leftIn(cache)).toEqual([]);
  });

  it("no kernel in the suite's image", async () => {
    const dir = cacheWithImage({ "disk.raw": "link", "initrd.img": "link" });
    const { line } = await failure(bootContainer({ engine: "vm", cacheDir: dir }, () => {}));
    expect(line).toMatch(/no kernel in the bookworm guest image .* \(vmlinuz or initrd\.img is missing\): remove .* and it is rebuilt/);
    expect(leftIn(dir)).toEqual([]);
  });

  it("an image with no file system in it is refused before qemu starts", async () => {
    const dir = cacheWithImage({ vmlinuz: "link", "initrd.img": "link", "disk.raw": (p) => writeFileSync(p, Buffer.alloc(1 << 20)) });
    const { line } = await failure(bootContainer({ engine: "vm", cacheDir: dir }, () => {}));
    expect(line).toMatch(/guest image .*disk\.raw is corrupt \(no ext4 file system in it\)/);
    expect(leftIn(dir)).toEqual([]);
  });

  it("an image corrupt past its superblock: the guest cannot mount its root, qemu ends, the console is kept", async () => {
    const dir = cacheWithImage({
      vmlinuz: "link",
      "initrd.img": "link",
      "disk.raw": (p) => {
        const disk = Buffer.alloc(64 << 20);
        disk.writeUInt16LE(0xef53, 1080); // the magic alone: what a torn write over the rest would leave
        writeFileSync(p, disk);
      },
    });
    const { error, line } = await failure(bootContainer({ engine: "vm", cacheDir: dir }, () => {}));
    expect(error.code).toBe("boot-failed");
    expect(line).toMatch(/qemu exited before the guest agent answered/);
    expect(error.kept.some((k) => k.endsWith("boot-console.log"))).toBe(true);
    console.log(`vm-bad-input: ${line}`);
    expect(leftIn(dir)).toEqual([]);
  }, 5 * 60_000);
});
