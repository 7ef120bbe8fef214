import { execFile } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// TypeScript is not a runtime dependency: a project that installs the packed outlive gets no
// compiler, can use the library and the CLI without one, and `scenario run FILE.ts` on a Node
// that cannot strip types names the package to install (exit 69) before any container starts.
// The install comes from the npm cache (--prefer-offline), as test/scenario/fresh-project does.
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const run = promisify(execFile);
const app = mkdtempSync(join(tmpdir(), "outlive-no-compiler-"));
// The scenario runner refuses a project its container user could not enter (mkdtemp makes 0700).
chmodSync(app, 0o755);
afterAll(() => rmSync(app, { recursive: true, force: true }));
const stripsTypes = Boolean((process as { features?: { typescript?: unknown } }).features?.typescript);

function outlive(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(join(app, "node_modules/.bin/outlive"), args, { cwd: app, timeout: 60_000 }, (error, out, err) =>
      resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, out, err }));
  });
}

describe("a project that installs the packed outlive", () => {
  beforeAll(async () => {
    const packed = JSON.parse((await run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", app], { cwd: ROOT, maxBuffer: 64 << 20 })).stdout);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "my-app", version: "1.0.0", type: "module", private: true }));
    await run("npm", ["i", "--prefer-offline", "--no-audit", "--no-fund", join(app, packed[0].filename)], { cwd: app, timeout: 300_000 });
    mkdirSync(join(app, "scenarios"));
    writeFileSync(join(app, "scenarios/typed.ts"), [
      'import { defineScenario } from "outlive/harness";',
      "const answer: number = 42;",
      'export default defineScenario({ name: "typed", summary: "a typed scenario", async inside(ctx) { ctx.check("the answer", answer === 42, answer); } });',
      "",
    ].join("\n"));
  }, 400_000);

  it("gets no compiler, and declares it an optional peer", () => {
    expect(existsSync(join(app, "node_modules/typescript"))).toBe(false);
    const manifest = JSON.parse(readFileSync(join(app, "node_modules/outlive/package.json"), "utf8"));
    expect(manifest.dependencies).not.toHaveProperty("typescript");
    expect(manifest.peerDependenciesMeta).toEqual({ typescript: { optional: true } });
  });

  it("uses the library and the CLI without one", async () => {
    const lib = await run(process.execPath, ["--input-type=module", "-e", 'const m = await import("outlive"); console.log(typeof m.Supervisor.open)'], { cwd: app });
    expect(lib.stdout.trim()).toBe("function");
    const help = await outlive("--help");
    expect(help).toMatchObject({ code: 0, err: "" });
  });

  it.skipIf(stripsTypes)("scenario run of a .ts file says which package to install, exit 69, before any container", async () => {
    const r = await outlive("scenario", "run", "scenarios/typed.ts", "--systemd", "257");
    expect(r.code).toBe(69);
    expect(r.err.trim().split("\n")).toHaveLength(1);
    expect(r.err).toContain("scenarios/typed.ts");
    expect(r.err).toContain('the package "typescript" is not installed');
    expect(r.err).toContain("npm install --save-dev typescript");
    expect(r.err).toContain("[E_MISSING_DEPENDENCY]");
    expect(r.out).toBe("");
  });

  it("loads the same .ts file once the compiler is installed (or the Node strips types)", async () => {
    if (!stripsTypes) {
      const version = JSON.parse(readFileSync(join(ROOT, "node_modules/typescript/package.json"), "utf8")).version;
      await run("npm", ["i", "-D", "--prefer-offline", "--no-audit", "--no-fund", `typescript@${version}`], { cwd: app, timeout: 300_000 });
    }
    const loader = join(app, "node_modules/outlive/dist/harness/shared/load-file.js");
    const r = await run(process.execPath, ["--input-type=module", "-e",
      `const { loadScenarioFile } = await import(${JSON.stringify(loader)}); console.log((await loadScenarioFile("scenarios/typed.ts")).map((s) => s.name).join())`], { cwd: app });
    expect(r.stdout.trim()).toBe("typed");
  }, 300_000);
});
if (stripsTypes) console.log("test/package/no-compiler: the missing-compiler message is skipped: this Node strips types itself and needs no compiler");
