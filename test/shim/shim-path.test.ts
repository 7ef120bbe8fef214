import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { findShim, SHIM_BUILD } from "../../lib/spawn/shim-path.ts";

// Where the library finds outlive-shim: the option, OUTLIVE_SHIM, the platform package, the build beside the sources.
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "outlive-shim-path-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function executable(path: string): string {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, "#!/bin/sh\n");
  chmodSync(path, 0o755);
  return path;
}

describe("findShim", () => {
  it("takes the shimPath option first, then OUTLIVE_SHIM, and reports one that cannot run instead of passing it over", () => {
    const a = executable(join(scratch, "a", "outlive-shim"));
    const b = executable(join(scratch, "b", "outlive-shim"));
    expect(findShim({ shimPath: a, env: { OUTLIVE_SHIM: b } })).toEqual({ path: a, source: "option" });
    expect(findShim({ env: { OUTLIVE_SHIM: b } })).toEqual({ path: b, source: "env" });
    const missing = findShim({ env: { OUTLIVE_SHIM: join(scratch, "nowhere") } });
    expect(missing).toEqual({ path: null, reason: `OUTLIVE_SHIM names ${join(scratch, "nowhere")}, which is not there` });
    const plain = join(scratch, "plain");
    writeFileSync(plain, "");
    expect(findShim({ shimPath: plain }).path).toBeNull();
    expect(findShim({ shimPath: "outlive-shim" })).toEqual({ path: null, reason: "the shimPath option names outlive-shim, which is not an absolute path" });
  });

  it("finds the platform package from the library's place before a build", () => {
    const lib = join(scratch, "project", "node_modules", "outlive", "dist", "pkg");
    mkdirSync(lib, { recursive: true });
    const packaged = executable(join(scratch, "project", "node_modules", "@outlive", "shim-linux-x64", "bin", "outlive-shim"));
    writeFileSync(join(scratch, "project", "node_modules", "@outlive", "shim-linux-x64", "package.json"), JSON.stringify({ name: "@outlive/shim-linux-x64", version: "0.0.0" }));
    mkdirSync(join(scratch, "project", "node_modules", "outlive", "shim"), { recursive: true });
    writeFileSync(join(scratch, "project", "node_modules", "outlive", "shim", "Cargo.toml"), "");
    executable(join(scratch, "project", "node_modules", "outlive", SHIM_BUILD));
    expect(findShim({ env: {}, from: pathToFileURL(join(lib, "outlive.js")).href })).toEqual({ path: packaged, source: "package" });
  });

  it("walks up to the build beside the sources, from lib/ (Deno) and from the bundle dist/pkg/", () => {
    const built = join(ROOT, SHIM_BUILD);
    for (const from of [join(ROOT, "lib", "spawn", "shim-path.ts"), join(ROOT, "dist", "pkg", "outlive.js")]) {
      const found = findShim({ env: {}, from: pathToFileURL(from).href });
      if (found.path === null) expect(found.reason).toContain(`${built} is not built`);
      else expect(found).toEqual({ path: built, source: "build" });
    }
    const elsewhere = findShim({ env: {}, from: pathToFileURL(join(scratch, "x.js")).href });
    expect(elsewhere.path).toBeNull();
  });
});
