import { describe, expect, it, vi } from "vitest";
import { ContainerError, describeFailure, resolveOptions } from "../../harness/host/container/mod.ts";
import { recipeFor } from "../../harness/host/container/image/recipe.ts";
import { createServer } from "node:http";
import { imageEntryDir, imageRecipeFor, kernelReleaseUnserved } from "../../harness/host/container/engine/vm/guest-image.ts";
import { scenarioCli } from "../../harness/host/cli.ts";

describe("the bookworm-5.10 suite: bookworm's userland on Debian 11's kernel, vm engine only", () => {
  it("is refused with one line on every engine that boots no kernel of its own", () => {
    for (const engine of ["nspawn", "podman", "docker", "host", "auto"] as const) {
      let error: unknown;
      try {
        resolveOptions({ suite: "bookworm-5.10", engine });
      } catch (e) {
        error = e;
      }
      expect(error, engine).toBeInstanceOf(ContainerError);
      const { line } = describeFailure(error);
      expect(line).not.toContain("\n");
      expect(line).toMatch(new RegExp(`only the vm engine .*got engine ${engine}`));
    }
  });
  it("under vm: a machine name without dots, the bookworm rootfs, an image recipe of its own", () => {
    const old = resolveOptions({ suite: "bookworm-5.10", engine: "vm" });
    const plain = resolveOptions({ suite: "bookworm", engine: "vm" });
    expect(old.name).toMatch(/^outlive-bookworm-5-10-/);
    expect(recipeFor(old)).toEqual(recipeFor(plain));
    const oldImage = imageRecipeFor(old, "rootfshash");
    const plainImage = imageRecipeFor(plain, "rootfshash");
    expect(oldImage.kernelFrom).toBe("bullseye");
    expect(oldImage.kernelScript).toMatch(/linux-image-amd64\/\$from/);
    // The suites on their own kernel keep the recipe they had, so their cached images stay valid.
    expect(Object.keys(plainImage)).not.toContain("kernelFrom");
    expect(imageEntryDir("/c", oldImage)).toMatch(/^\/c\/bookworm-5\.10-vm-/);
    expect(imageEntryDir("/c", oldImage)).not.toBe(imageEntryDir("/c", { ...oldImage, suite: "bookworm-5.10", kernelFrom: "buster" }));
  });
  it("the scenario CLI: --suite with another engine is one line and exit 2, before anything boots", async () => {
    const errors: string[] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((line: string) => void errors.push(line));
    try {
      expect(await scenarioCli(["kill-escapees", "--suite", "bookworm-5.10", "--engine", "host"])).toBe(2);
      expect(await scenarioCli(["kill-escapees", "--suite", "bullseye", "--engine", "vm"])).toBe(2);
      expect(await scenarioCli(["kill-escapees", "--suite", "bookworm", "--systemd", "252"])).toBe(2);
    } finally {
      spy.mockRestore();
    }
    expect(errors[0]).toMatch(/^Expected --suite bookworm-5\.10 with --engine vm: .*got engine host/);
    expect(errors[1]).toMatch(/^Expected --suite to be one of bookworm, trixie, bookworm-5\.10, got "bullseye"/);
    expect(errors[2]).toMatch(/--suite and --systemd/);
    expect(errors.every((e) => !e.includes("\n"))).toBe(true);
  });
});

describe("whether the mirror still serves the release the kernel comes from", () => {
  it("says why not when the mirror answers 404 (a release moved to the archive), and null when it serves it", async () => {
    const server = createServer((req, res) => {
      res.statusCode = req.url === "/debian/dists/bullseye/Release" ? 200 : 404;
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const mirror = `http://127.0.0.1:${(server.address() as { port: number }).port}/debian`;
    try {
      expect(await kernelReleaseUnserved(mirror, "bullseye")).toBeNull();
      expect(await kernelReleaseUnserved(`${mirror}/`, "buster")).toBe(`the mirror no longer serves Debian buster (${mirror}/dists/buster/Release: HTTP 404)`);
    } finally {
      server.close();
    }
  });
  it("says it cannot reach a mirror that does not answer", async () => {
    expect(await kernelReleaseUnserved("http://127.0.0.1:9/debian", "bullseye", 3000)).toMatch(/^cannot reach the mirror for Debian bullseye \(http:\/\/127\.0\.0\.1:9\/debian\/dists\/bullseye\/Release: /);
  });
});
