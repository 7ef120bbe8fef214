import { execFile } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeReleases } from "../support/node-releases.ts";

// A user's `.ts` scenario, in a project OUTSIDE this repository that installs the packed outlive as the
// docs say (`npm i -D outlive`) and, beside it, whatever `typescript@latest` is today (7.x has no
// JavaScript API at all; outlive must not need one). The scenario file loads on every Node release CI
// tests: Node 20 through outlive's own esbuild, Node >= 23.6 by its own type stripping. And the one way
// it can still fail, an install without outlive's esbuild, is named in one line with exit 69.
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const run = promisify(execFile);
const app = mkdtempSync(join(tmpdir(), "outlive-ts-scenario-"));
// The scenario runner refuses a project its container user could not enter (mkdtemp makes 0700).
chmodSync(app, 0o755);
afterAll(() => rmSync(app, { recursive: true, force: true }));
const releases = nodeReleases();

function loadWith(node: string): Promise<{ code: number; out: string; err: string }> {
  const loader = join(app, "node_modules/outlive/dist/harness/shared/load-file.js");
  const script = `const { loadScenarioFile } = await import(${JSON.stringify(loader)});
    console.log((await loadScenarioFile("scenarios/typed.ts")).map((s) => s.name).join())`;
  return new Promise((resolve) => {
    execFile(node, ["--input-type=module", "-e", script], { cwd: app, timeout: 60_000 }, (error, out, err) =>
      resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, out, err }));
  });
}

function outlive(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(join(app, "node_modules/.bin/outlive"), args, { cwd: app, timeout: 60_000 }, (error, out, err) =>
      resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, out, err }));
  });
}

describe("a .ts scenario in a project that installs the packed outlive and typescript@latest", () => {
  beforeAll(async () => {
    const packed = JSON.parse((await run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", app], { cwd: ROOT, maxBuffer: 64 << 20 })).stdout);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "my-app", version: "1.0.0", type: "module", private: true }));
    await run("npm", ["i", "-D", "--no-audit", "--no-fund", join(app, packed[0].filename), "typescript@latest"], { cwd: app, timeout: 300_000 });
    mkdirSync(join(app, "scenarios"));
    writeFileSync(join(app, "scenarios/steps.ts"), "export const answer: number = 42;\n");
    writeFileSync(join(app, "scenarios/typed.ts"), [
      'import { defineScenario } from "outlive/harness";',
      'import { answer } from "./steps.ts";',
      "interface Shape { n: number }",
      "const shape: Shape = { n: answer };",
      'export default defineScenario({ name: "typed", summary: "a typed scenario", async inside(ctx) { ctx.check("the answer", shape.n === 42, shape); } });',
      "",
    ].join("\n"));
  }, 400_000);

  it("asks nothing of the user's typescript: outlive declares no dependency or peer on it", () => {
    const manifest = JSON.parse(readFileSync(join(app, "node_modules/outlive/package.json"), "utf8"));
    expect(manifest.dependencies).not.toHaveProperty("typescript");
    expect(manifest.peerDependencies ?? {}).not.toHaveProperty("typescript");
    const ts = JSON.parse(readFileSync(join(app, "node_modules/typescript/package.json"), "utf8"));
    console.log(`test/package/ts-scenario: the project has typescript ${ts.version}; Node releases: ${releases.map((r) => r.version).join(", ")}`);
  });

  for (const release of releases) {
    it(`loads the scenario file on Node ${release.version}`, async () => {
      const r = await loadWith(release.path);
      expect(r.err).not.toMatch(/Error/);
      expect(r.out.trim()).toBe("typed");
      expect(r.code).toBe(0);
    }, 120_000);
  }

  it("names outlive's missing esbuild in one line, exit 69, on a Node that cannot strip types", async () => {
    const old = releases.find((r) => Number(r.version.slice(1).split(".")[0]) < 22);
    if (!old || old.path !== process.execPath) {
      console.log("test/package/ts-scenario: the missing-esbuild message is skipped: this Node strips types itself and needs no esbuild");
      return;
    }
    const esbuild = join(app, "node_modules/esbuild");
    expect(existsSync(esbuild)).toBe(true);
    renameSync(esbuild, `${esbuild}.away`);
    try {
      const r = await outlive("scenario", "run", "scenarios/typed.ts", "--systemd", "257");
      expect(r.code).toBe(69);
      expect(r.err.trim().split("\n")).toHaveLength(1);
      expect(r.err).toContain("scenarios/typed.ts");
      expect(r.err).toContain('outlive\'s dependency "esbuild" cannot be found');
      expect(r.err).toContain("[E_MISSING_DEPENDENCY]");
      expect(r.out).toBe("");
    } finally {
      renameSync(`${esbuild}.away`, esbuild);
    }
  }, 120_000);
});
