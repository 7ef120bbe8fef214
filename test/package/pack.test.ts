import { execFile } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

// What `npm pack` puts in the package: what users run (the built library, CLI and harness),
// their sources, the container recipe, the docs the README links to — and nothing a run made (the debootstrap cache,
// reports), even when a run has just left some in the working tree.
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const run = promisify(execFile);

describe("npm pack", () => {
  it("ships the built library, CLI, harness, their sources and the container recipe, and no run's leftovers", async () => {
    const stray = [join(ROOT, "harness/reports/pack-test-leftover"), join(ROOT, "harness/examples/fate-unknown/reports/pack-test-leftover")];
    for (const dir of stray) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "report.json"), "{}");
    }
    let files: string[];
    try {
      const out = JSON.parse((await run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: ROOT, maxBuffer: 64 << 20 })).stdout);
      files = out[0].files.map((f: { path: string }) => f.path);
    } finally {
      for (const dir of stray) rmSync(dir, { recursive: true, force: true });
    }
    for (const needed of [
      "package.json", "README.md", "deno.json", "docs/README.md", "docs/guide/library.md", "docs/reference/cli.md",
      "dist/lib/mod.js", "dist/lib/mod.d.ts", "lib/mod.ts", "dist/pkg/outlive.js",
      "dist/scripts/outlive.js", "scripts/outlive.ts",
      "dist/harness/mod.js", "dist/harness/mod.d.ts", "harness/mod.ts",
      "dist/harness/inside/driver.js", "dist/harness/inside/module/module.js", "harness/inside/module/module.ts",
      "dist/harness/shared/ts/hooks.js",
      "harness/examples/fate-unknown/scenario.ts", "harness/examples/idle-reaper/naive-reaper.sh",
      "container/rootfs-setup.sh", "container/install-deps.sh", "container/Containerfile",
    ]) expect(files, needed).toContain(needed);
    const made = files.filter((f) => /(^|\/)(reports|cache)\//.test(f) || f.startsWith("container/cache") || /^(test|bench|dist\/bench|dist\/test|node_modules)\//.test(f));
    expect(made).toEqual([]);
    // A sanity bound: the package is code, not a root file system (it once held 12,414 files).
    expect(files.length).toBeLessThan(1500);
  }, 120_000);
});
