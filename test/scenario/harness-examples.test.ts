import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cannotRunHereReason } from "../../harness/host/container/mod.ts";
import { cli } from "./cli-process.ts";
import { ROOTFS_READY_MS, rootfsReady } from "./rootfs-ready.ts";

// Every `@example` behind `outlive/harness` is checked the way a user's file would be: it
// imports "outlive/harness" by name (the package's own exports, with its .d.ts types) and
// must type-check under strict TypeScript; then each runs: a scenario example with
// `outlive scenario run` in the container, any other with node on this host (.ts through
// the package's TypeScript hooks), and must end well.
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const EXAMPLE = /@example\s*\n\s*\*\s*```ts\n([\s\S]*?)\n\s*\*\s*```/g;
const dir = join(ROOT, `.outlive-harness-examples-${process.pid}`);
const missing = await cannotRunHereReason();
if (missing) console.log(`test/scenario/harness-examples: not running the examples: ${missing}`);
const written: string[] = [];
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function exportedFiles(): string[] {
  const mod = readFileSync(join(ROOT, "harness/mod.ts"), "utf8");
  const files = [...mod.matchAll(/from "(\.\/[^"]+)"/g)].map((m) => resolve(join(ROOT, "harness"), m[1]));
  return [join(ROOT, "harness/mod.ts"), ...new Set(files)];
}

describe("outlive/harness examples", () => {
  it("every exported file documents its export with an example that type-checks against the published types", async () => {
    mkdirSync(dir, { recursive: true });
    const without: string[] = [];
    for (const file of exportedFiles()) {
      const blocks = [...readFileSync(file, "utf8").matchAll(EXAMPLE)].map((m) => m[1].split("\n").map((l) => l.replace(/^\s*\* ?/, "")).join("\n"));
      if (blocks.length === 0) without.push(file.slice(ROOT.length));
      blocks.forEach((code, i) => {
        const name = join(dir, `${file.slice(ROOT.length).replace(/[/.]/g, "_")}_${i}.ts`);
        writeFileSync(name, `${code}\nexport {};\n`);
        written.push(name);
      });
    }
    // Types-only files (the report's shapes) document their fields instead.
    expect(without.filter((f) => !/report\.ts$/.test(f))).toEqual([]);
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({
      compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", target: "ES2022", strict: true, noEmit: true, skipLibCheck: true, types: ["node"] },
      files: written.map((w) => w.slice(dirname(w).length + 1)),
    }));
    const r = await promisify(execFile)(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", dir]).then(() => "", (e) => `${e.stdout}${e.stderr}`);
    expect(r).toBe("");
    expect(written.length).toBeGreaterThanOrEqual(9);
  }, 120_000);
});

describe.skipIf(missing !== null)("outlive/harness examples, run", () => {
  beforeAll(() => rootfsReady(["trixie"]), ROOTFS_READY_MS);

  it("scenario examples pass (or skip with a reason) in the container; the others exit 0 on this host", async () => {
    expect(written.length).toBeGreaterThan(0);
    const scenarios = written.filter((f) => /export default defineScenario/.test(readFileSync(f, "utf8")));
    const scripts = written.filter((f) => !scenarios.includes(f));
    for (const f of scripts) {
      const r = await promisify(execFile)(process.execPath, ["--import", join(ROOT, "dist/harness/shared/ts/register.js"), f], { timeout: 60_000 })
        .then(() => "ok", (e) => `${f}: ${e.stderr}`);
      expect(r).toBe("ok");
    }
    const json = join(dir, "result.json");
    const r = await cli([...scenarios, "--systemd", "257", "--reports", join(dir, "reports"), "--json", json]);
    const results: { name: string; verdict: string; why: string | null }[] = JSON.parse(readFileSync(json, "utf8")).results;
    expect(results.length, r.stderr.slice(-2000)).toBe(scenarios.length);
    const bad = results.filter((x) => !(x.verdict === "pass" || (x.verdict === "skip" && x.why)));
    expect(bad, r.stderr.slice(-2000)).toEqual([]);
  }, 300_000);
});
