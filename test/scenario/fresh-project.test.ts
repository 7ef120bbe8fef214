import { execFile } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cannotRunHereReason } from "../../harness/host/container/mod.ts";
import { leftoversOf } from "./leftovers.ts";
import { cli } from "./cli-process.ts";
import { ROOTFS_READY_MS, rootfsReady } from "./rootfs-ready.ts";
import { fencedBlockAfter } from "../support/markdown.ts";

// The harness guide's promise (docs/guide/harness.md, "Reproducing a bug report"), as a user
// keeps it: a project OUTSIDE this repository installs the
// packed outlive (`npm i -D ./outlive-x.tgz`, from the npm cache where it can; with typescript, for
// the project's own type check: no Node needs it to run a .ts scenario), keeps the
// guide's two scenario files in scenarios/, type-checks them against `outlive/harness`, and
// runs them with `npx outlive scenario run` on systemd 252 and 257, under Node and under Deno.
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const run = promisify(execFile);
const missing = await cannotRunHereReason();
if (missing) console.log(`test/scenario/fresh-project: skipping: ${missing}`);
const app = mkdtempSync(join(tmpdir(), "outlive-fresh-app-"));
// A project folder as users have them (mkdtemp makes 0700, which the container's user could not enter).
chmodSync(app, 0o755);
afterAll(() => rmSync(app, { recursive: true, force: true }));

/** The ```ts block that follows the harness guide's mention of `file`. */
function guideBlock(file: string): string {
  return fencedBlockAfter("docs/guide/harness.md", `\`${file}\`:`, "ts");
}

// Read where the container cannot run too: a page that lost a block, or its marker, fails here first.
describe("the harness guide's scenario files", () => {
  it.each(["scenarios/my-bug.ts", "scenarios/my-supervisor.ts"])("%s is shown as a default export of defineScenario", (file) => {
    const block = guideBlock(file);
    expect(block).toContain('import { defineScenario } from "outlive/harness";');
    expect(block).toContain("export default defineScenario({");
  });
});

interface Result {
  name: string;
  suite: string;
  systemd: number;
  verdict: string;
  why: string | null;
  reportDir: string;
}

describe.skipIf(missing !== null)("a fresh project outside the repository", () => {
  // The user's cache (not OUTLIVE_CONTAINER_CACHE, which the runs below unset): a fresh machine builds both root
  // file systems there first, as the user's first run would, so that the runs' hang guard times the runs alone.
  beforeAll(() => rootfsReady(["bookworm", "trixie"], { ...process.env, OUTLIVE_CONTAINER_CACHE: undefined }), ROOTFS_READY_MS);
  beforeAll(async () => {
    const packed = JSON.parse((await run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", app], { cwd: ROOT })).stdout);
    const version = (name: string) => JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")).version;
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "my-app", version: "1.0.0", type: "module", private: true }));
    await run("npm", ["i", "-D", "--prefer-offline", "--no-audit", "--no-fund", join(app, packed[0].filename), `deno@${version("deno")}`, `@types/node@${version("@types/node")}`, `typescript@${version("typescript")}`], { cwd: app, timeout: 300_000 });
    mkdirSync(join(app, "scenarios"));
    writeFileSync(join(app, "scenarios/my-bug.ts"), guideBlock("scenarios/my-bug.ts"));
    writeFileSync(join(app, "scenarios/my-supervisor.ts"), guideBlock("scenarios/my-supervisor.ts"));
    // outlive's module itself under Deno, from the installed package's sources (deno found in the user's node_modules).
    writeFileSync(join(app, "scenarios/deno-module.ts"), [
      'import { defineScenario } from "outlive/harness";',
      "export default defineScenario({",
      '  name: "deno-module", summary: "the module under Deno, from the installed package", runtime: "deno",',
      "  async inside(ctx) {",
      "    const d = ctx.daemon();",
      "    await d.start();",
      '    const t = await d.run({ id: "x", shell: "exit 7" });',
      "    const done = await ctx.completion(d, t.id);",
      '    ctx.check("its exit code, 7", done.exitCode === 7, done);',
      '    await d.stop("disable");',
      "  },",
      "});",
      "",
    ].join("\n"));
  }, 400_000);

  it("type-checks its scenarios against outlive/harness with the installed types", async () => {
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify({
      // skipLibCheck as `tsc --init` sets it: zx's own declarations name @types/fs-extra, which zx does not install.
      compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", target: "ES2022", strict: true, noEmit: true, skipLibCheck: true, types: ["node"] },
      include: ["scenarios"],
    }));
    const r = await run(join(app, "node_modules/.bin/tsc"), ["-p", app], { cwd: app }).then(() => ({ code: 0, out: "" }), (e) => ({ code: e.code, out: `${e.stdout}${e.stderr}` }));
    expect(r.out).toBe("");
    expect(r.code).toBe(0);
    // And a mistake is caught: the types are real, not `any`.
    writeFileSync(join(app, "scenarios/typo.ts"), 'import { defineScenario } from "outlive/harness";\nexport default defineScenario({ name: "t", summary: "", async inside(ctx) { ctx.chek("x", true); } });\n');
    const bad = await run(join(app, "node_modules/.bin/tsc"), ["-p", app], { cwd: app }).then(() => "", (e) => `${e.stdout}`);
    rmSync(join(app, "scenarios/typo.ts"));
    expect(bad).toMatch(/Property 'chek' does not exist/);
  }, 120_000);

  for (const runtime of ["node", "deno"] as const) {
    it(`runs them with npx outlive scenario run on systemd 252 and 257 under ${runtime}`, async () => {
      const json = join(app, `result-${runtime}.json`);
      const r = await cli(["scenarios/my-bug.ts", "scenarios/my-supervisor.ts", "scenarios/deno-module.ts", "--runtime", runtime, "--json", json], {
        cwd: app,
        command: [join(app, "node_modules/.bin/outlive")],
        // The user's cache (~/.cache/outlive, not the package's folder, which npm ci wiped): what this machine built
        // before (beforeAll above, on a fresh machine) is found again.
        env: { ...process.env, OUTLIVE_CONTAINER_CACHE: undefined },
      });
      const results: Result[] = JSON.parse(readFileSync(json, "utf8")).results;
      const seen = results.map((x) => `${x.name}@${x.systemd}: ${x.verdict}`).sort();
      expect(seen, `${JSON.stringify(results.map((x) => x.why))}\n${r.stderr.slice(-1500)}`).toEqual([
        "deno-module@252: pass", "deno-module@257: pass",
        "my-bug@252: pass", "my-bug@257: pass",
        "my-supervisor-restart@252: reproduced", "my-supervisor-restart@257: reproduced",
      ]);
      expect(r.code).toBe(0);
      for (const x of results) {
        // The reports went beside the file, and say what ran the scenario's code.
        expect(x.reportDir.startsWith(join(app, "scenarios/reports/"))).toBe(true);
        const report = JSON.parse(readFileSync(join(x.reportDir, "report.json"), "utf8"));
        expect(report.runtime).toMatch(runtime === "deno" ? /^deno 2\./ : /^node v2\d\./);
        expect(report.leftovers).toEqual([]);
        expect(readdirSync(x.reportDir)).toContain("timeline.svg");
      }
      expect(leftoversOf(r.pid)).toEqual([]);
    }, 400_000);
  }
});
