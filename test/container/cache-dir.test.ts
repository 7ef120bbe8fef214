import { chmodSync, chownSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkCacheDir, defaultCacheDir } from "../../harness/host/container/image/cache-dir.ts";
import { resolveOptions } from "../../harness/host/container/options.ts";
import { tempDir } from "../support/cli.ts";

const temp = tempDir("outlive-cache-dir-");
afterAll(() => temp.remove());

describe("where root file systems are cached", () => {
  it("defaults to the user's cache directory, not the package's; the variable and the option win", () => {
    expect(defaultCacheDir({}, "/home/ann")).toBe("/home/ann/.cache/outlive");
    expect(defaultCacheDir({ XDG_CACHE_HOME: "/var/cache/ann" }, "/home/ann")).toBe("/var/cache/ann/outlive");
    expect(defaultCacheDir({ XDG_CACHE_HOME: "relative/dir" }, "/home/ann")).toBe("/home/ann/.cache/outlive");
    expect(defaultCacheDir({ OUTLIVE_CONTAINER_CACHE: "/srv/cache", XDG_CACHE_HOME: "/x" }, "/home/ann")).toBe("/srv/cache");
    const saved = process.env.OUTLIVE_CONTAINER_CACHE;
    try {
      process.env.OUTLIVE_CONTAINER_CACHE = join(temp.dir, "from-env");
      expect(resolveOptions({}).cacheDir).toBe(join(temp.dir, "from-env"));
      expect(resolveOptions({ cacheDir: join(temp.dir, "given") }).cacheDir).toBe(join(temp.dir, "given"));
    } finally {
      if (saved === undefined) delete process.env.OUTLIVE_CONTAINER_CACHE;
      else process.env.OUTLIVE_CONTAINER_CACHE = saved;
    }
    expect(() => resolveOptions({ cacheDir: "rel" })).toThrow(/cacheDir.*absolute path/);
  });

  it("makes a missing one, and refuses one that group or others can write, or that is another user's", () => {
    const made = join(temp.dir, "made", "outlive");
    expect(checkCacheDir(made)).toBe(made);
    const open = join(temp.dir, "open");
    mkdirSync(open);
    chmodSync(open, 0o777);
    expect(() => checkCacheDir(open)).toThrow(/writable by others \(mode 777\); refusing it/);
    chmodSync(open, 0o775);
    expect(() => checkCacheDir(open)).toThrow(/writable by its group/);
    // A link to a shared cache is judged by where it points.
    const link = join(temp.dir, "link");
    symlinkSync(open, link);
    expect(() => checkCacheDir(link)).toThrow(/writable by its group/);
    if (process.getuid?.() !== 0) {
      console.log("skipped the other user's cache: chown needs root");
      return;
    }
    const theirs = join(temp.dir, "theirs");
    mkdirSync(theirs, { mode: 0o755 });
    chownSync(theirs, 4321, 4321);
    expect(() => checkCacheDir(theirs)).toThrow(/belongs to uid 4321, not this user/);
  });
});

describe("a cached root file system", () => {
  it("is taken only when its recipe.json is this recipe: an entry left under the name by another outlive is rebuilt", async () => {
    const { isReady } = await import("../../harness/host/container/image/rootfs.ts");
    const { cacheEntryDir, recipeFor, recipeHash } = await import("../../harness/host/container/image/recipe.ts");
    const { writeFileSync } = await import("node:fs");
    const options = resolveOptions({ cacheDir: join(temp.dir, "entries") });
    const recipe = recipeFor(options);
    const hash = recipeHash(recipe);
    const entry = cacheEntryDir(options.cacheDir, recipe);
    mkdirSync(join(entry, "rootfs/usr/lib/systemd"), { recursive: true });
    writeFileSync(join(entry, "rootfs/usr/lib/systemd/systemd"), "");
    expect(isReady(entry, recipe, hash)).toBe(false); // no recipe.json: a build that never finished
    writeFileSync(join(entry, "recipe.json"), JSON.stringify({ ...recipe, packages: [...recipe.packages, "extra"], hash }));
    expect(isReady(entry, recipe, hash)).toBe(false);
    writeFileSync(join(entry, "recipe.json"), JSON.stringify({ ...recipe, hash }, null, 2));
    expect(isReady(entry, recipe, hash)).toBe(true);
  });
});
