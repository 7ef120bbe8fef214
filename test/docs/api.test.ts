import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../support/markdown.ts";

// `npm run docs:api` (scripts/docs-api.ts): the API reference rendered by `deno doc --html` from
// lib/mod.ts, with each export's @example. docs/reference/api.md promises it; this builds it into a
// temp folder and looks for the public face's page and its example.
const out = mkdtempSync(join(tmpdir(), "outlive-docs-api-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));
const deno = join(ROOT, "node_modules", ".bin", "deno");

describe.skipIf(!existsSync(deno))("the API reference", () => {
  it("renders every export of lib/mod.ts, Supervisor with its example", () => {
    const r = spawnSync(process.execPath, [join(ROOT, "dist", "scripts", "docs-api.js"), "--output", join(out, "api")], { encoding: "utf8", timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(join(out, "api", "index.html"))).toBe(true);
    const page = readFileSync(join(out, "api", "~", "Supervisor.html"), "utf8");
    expect(page).toContain('id="example_0"');
    expect(page).toContain("Supervisor.open");
  }, 150_000);

  it("is an npm script", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    expect(pkg.scripts["docs:api"]).toContain("dist/scripts/docs-api.js");
  });
});
