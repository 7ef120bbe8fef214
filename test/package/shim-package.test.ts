import { execFile } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SHIM_BUILD } from "../../lib/spawn/shim-path.ts";

// The release as npm would publish it (scripts/pack-release.ts): outlive, and the per-platform package that
// carries outlive-shim, installed from their two tarballs into a project OUTSIDE this repository, whose
// other dependencies come from the npm cache. The installed library finds the shim in its package (not in a
// checkout: there is none), and a task runs under it.
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const run = promisify(execFile);
const built = existsSync(join(ROOT, SHIM_BUILD));
if (!built) console.log(`test/package/shim-package: skipping: ${SHIM_BUILD} is not built (no cargo here: npm run build says why)`);
const app = mkdtempSync(join(tmpdir(), "outlive-shim-package-"));
chmodSync(app, 0o755);
afterAll(() => rmSync(app, { recursive: true, force: true }));

describe.skipIf(!built)("the release's two packages, installed in a project outside the repository", () => {
  let tarballs: string[] = [];
  beforeAll(async () => {
    const out = join(app, "release");
    const packed = await run(process.execPath, [join(ROOT, "dist/scripts/pack-release.js"), "--out", out], { cwd: ROOT, maxBuffer: 64 << 20, timeout: 300_000 });
    tarballs = packed.stdout.trim().split("\n");
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "my-supervisor", version: "1.0.0", type: "module", private: true }));
    await run("npm", ["i", "--prefer-offline", "--no-audit", "--no-fund", ...tarballs], { cwd: app, timeout: 300_000 });
  }, 400_000);

  it("installs the shim's package, for this platform only, as outlive's optional dependency", () => {
    const main = JSON.parse(readFileSync(join(app, "node_modules/outlive/package.json"), "utf8"));
    expect(main.optionalDependencies).toEqual({ "@outlive/shim-linux-x64": main.version });
    const shim = JSON.parse(readFileSync(join(app, "node_modules/@outlive/shim-linux-x64/package.json"), "utf8"));
    expect(shim).toMatchObject({ version: main.version, os: ["linux"], cpu: ["x64"] });
    expect(existsSync(join(app, "node_modules/@outlive/shim-linux-x64/bin/outlive-shim"))).toBe(true);
    // The repository's own manifest does not name it: npm ci in a checkout would look for it on the registry.
    expect(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).optionalDependencies ?? {}).not.toHaveProperty("@outlive/shim-linux-x64");
  });

  it("probe says tasks run under the packaged shim, and a task does", async () => {
    const probe = JSON.parse((await run(join(app, "node_modules/.bin/outlive"), ["probe", "--json"], { cwd: app })).stdout);
    expect(probe.shim.path).toBe(join(app, "node_modules/@outlive/shim-linux-x64/bin/outlive-shim"));
    expect(probe.shim.why).toContain("from its npm package");
    const script = `
      import { Supervisor } from "outlive";
      import { mkdtempSync, readFileSync, rmSync } from "node:fs";
      const storage = mkdtempSync("/tmp/outlive-shim-package-storage-");
      const sup = await Supervisor.open({ storage });
      const task = await sup.run({ argv: ["sh", "-c", "sleep 0.2; exit 4"] });
      const argv = readFileSync("/proc/" + task.pid + "/cmdline", "latin1").split("\\0").filter(Boolean);
      const done = await sup.wait(task.id);
      await sup.close();
      rmSync(storage, { recursive: true });
      console.log(JSON.stringify({ argv, reason: sup.placementReason, exitCode: done.exitCode }));`;
    const r = JSON.parse((await run(process.execPath, ["--input-type=module", "-e", script], { cwd: app })).stdout);
    expect(r.argv[0]).toBe("outlive-shim");
    expect(r.argv).toHaveLength(2);
    expect(r.reason).toContain("from its npm package");
    expect(r.exitCode).toBe(4);
  }, 60_000);
});
