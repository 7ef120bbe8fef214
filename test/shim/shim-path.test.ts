import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { findShim, SHIM_BUILD, shimChoice } from "../../lib/spawn/shim-path.ts";

// Where the library finds outlive-shim: the option, OUTLIVE_SHIM, the platform package, the build beside the sources;
// run as the single executable, the shim beside it, else the copy it carries, written to the user's cache.
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

describe("findShim in the single executable", () => {
  const shimBytes = new TextEncoder().encode("#!/bin/sh\nexit 0\n");
  const sha256 = createHash("sha256").update(shimBytes).digest("hex");
  let reads = 0;
  const embedded = { sha256, bytes: () => (reads++, shimBytes) };

  it("takes the shim beside the executable first, as the release archive unpacks", () => {
    const exe = executable(join(scratch, "release", "outlive"));
    const beside = executable(join(scratch, "release", "outlive-shim"));
    const found = findShim({ env: { HOME: join(scratch, "home-beside") }, executable: { path: exe, embedded } });
    expect(found).toEqual({ path: beside, source: "beside-executable" });
    expect(shimChoice(found).why).toBe(`outlive-shim (${beside}, from beside the executable)`);
    expect(existsSync(join(scratch, "home-beside"))).toBe(false);
    // OUTLIVE_SHIM still comes first.
    const named = executable(join(scratch, "named", "outlive-shim"));
    expect(findShim({ env: { OUTLIVE_SHIM: named }, executable: { path: exe, embedded } })).toEqual({ path: named, source: "env" });
  });

  it("else writes its own copy once to $XDG_CACHE_HOME/outlive/shim/<sha256>/ (0755), checks its hash at every find, and writes it again when it differs", () => {
    const exe = executable(join(scratch, "lone", "outlive"));
    const cache = join(scratch, "xdg-cache");
    const expected = join(cache, "outlive", "shim", sha256, "outlive-shim");
    reads = 0;
    // A probe (write: false) says where it will be and writes nothing.
    expect(findShim({ env: { XDG_CACHE_HOME: cache }, executable: { path: exe, embedded }, write: false })).toEqual({ path: expected, source: "embedded" });
    expect(existsSync(expected)).toBe(false);
    const found = findShim({ env: { XDG_CACHE_HOME: cache, HOME: "/nonexistent" }, executable: { path: exe, embedded } });
    expect(found).toEqual({ path: expected, source: "embedded" });
    expect(shimChoice(found).why).toBe(`outlive-shim (${expected}, from the copy inside the executable, written to the user's cache)`);
    expect(readFileSync(expected)).toEqual(Buffer.from(shimBytes));
    expect(statSync(expected).mode & 0o777).toBe(0o755);
    expect(readdirSync(join(expected, ".."))).toEqual(["outlive-shim"]);
    expect(reads).toBe(1);
    // Found again: the copy's hash matches, nothing is written.
    expect(findShim({ env: { XDG_CACHE_HOME: cache }, executable: { path: exe, embedded } }).path).toBe(expected);
    expect(reads).toBe(1);
    // A copy changed by someone is never run: it is written again from the executable.
    writeFileSync(expected, "#!/bin/sh\nexit 1\n");
    expect(findShim({ env: { XDG_CACHE_HOME: cache }, executable: { path: exe, embedded } }).path).toBe(expected);
    expect(readFileSync(expected)).toEqual(Buffer.from(shimBytes));
    expect(reads).toBe(2);
    // HOME/.cache when XDG_CACHE_HOME is not set.
    const home = join(scratch, "home");
    expect(findShim({ env: { HOME: home }, executable: { path: exe, embedded } }).path).toBe(join(home, ".cache", "outlive", "shim", sha256, "outlive-shim"));
  });

  it("says why there is none: no cache folder, a damaged executable, an executable that carries none", () => {
    const exe = executable(join(scratch, "lone2", "outlive"));
    const noCache = findShim({ env: {}, executable: { path: exe, embedded } });
    expect(noCache).toEqual({ path: null, reason: `no shimPath option, no OUTLIVE_SHIM, no outlive-shim beside ${exe}, and neither XDG_CACHE_HOME nor HOME names a folder to write the executable's own to` });
    const damaged = findShim({ env: { XDG_CACHE_HOME: join(scratch, "c2") }, executable: { path: exe, embedded: { sha256: "0".repeat(64), bytes: () => shimBytes } } });
    expect(damaged.path).toBeNull();
    expect("reason" in damaged && damaged.reason).toContain("the executable is damaged");
    expect(existsSync(join(scratch, "c2", "outlive", "shim", "0".repeat(64), "outlive-shim"))).toBe(false);
    const none = findShim({ env: { XDG_CACHE_HOME: join(scratch, "c3") }, executable: { path: exe, embedded: null } });
    expect(none).toEqual({ path: null, reason: `no shimPath option, no OUTLIVE_SHIM, no outlive-shim beside ${exe}, and the executable carries none` });
  });

  it("is not the executable under node: the package and the build are looked for as before", () => {
    const found = findShim({ env: {} });
    if (found.path !== null) expect(["package", "build"]).toContain(found.source);
  });
});
