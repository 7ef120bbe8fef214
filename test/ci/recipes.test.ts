import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fencedBlockAfter } from "../support/markdown.ts";

/**
 * Neither GitHub Actions nor GitLab can run here, so the CI recipes are
 * checked by the validators their users would reach for: action-validator
 * (GitHub's workflow schema) and gitlab-ci-local (GitLab's own ci.json
 * schema). Each is also shown a broken copy, so a validator that accepts
 * anything would fail this test.
 */
const root = join(__dirname, "..", "..");
const temp = mkdtempSync(join(tmpdir(), "outlive-ci-recipes-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

function actionValidator(file: string) {
  return spawnSync(process.execPath, [join(root, "node_modules/@action-validator/cli/cli.mjs"), file], { encoding: "utf8", timeout: 60_000 });
}

/** gitlab-ci-local needs Node 22 (Set.prototype.union); Deno 2 from the devDependencies runs it. It wants a git checkout with a remote. */
function gitlabCiLocal(yaml: string) {
  const dir = mkdtempSync(join(temp, "gitlab-"));
  writeFileSync(join(dir, ".gitlab-ci.yml"), yaml);
  spawnSync("git", ["init", "-q", dir]);
  spawnSync("git", ["-C", dir, "remote", "add", "origin", "https://gitlab.invalid/outlive/outlive.git"]);
  return spawnSync(join(root, "node_modules/.bin/deno"), ["run", "-A", join(root, "node_modules/gitlab-ci-local/dist/index.js"), "--list"], {
    cwd: dir, encoding: "utf8", timeout: 120_000, env: { ...process.env, NO_COLOR: "1" },
  });
}

const workflows = readdirSync(join(root, ".github/workflows")).filter((f) => f.endsWith(".yml"));
const gitlab = readFileSync(join(root, ".ci/gitlab-ci.yml"), "utf8");

describe("the CI recipes validate", () => {
  it.each(workflows)("GitHub workflow %s passes action-validator", (file) => {
    const r = actionValidator(join(root, ".github/workflows", file));
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("action-validator rejects a workflow with a misspelt key", () => {
    const text = readFileSync(join(root, ".github/workflows", workflows[0]!), "utf8").replace("runs-on:", "runs-onn:");
    const broken = join(temp, "broken.yml");
    writeFileSync(broken, text);
    expect(actionValidator(broken).status).toBe(1);
  });

  it("the GitLab snippet passes GitLab's CI schema and lists its job", () => {
    const r = gitlabCiLocal(gitlab);
    expect(r.stdout + r.stderr).toContain("json schema validated");
    expect(r.stdout + r.stderr).not.toContain("WARN");
    // One job for each Node release outlive is tested on.
    for (const node of ["20", "22", "24"]) expect(r.stdout).toMatch(new RegExp(`^test: \\[${node}\\]\\s+test\\s+on_success`, "m"));
    expect(r.status).toBe(0);
  }, 150_000);

  it("gitlab-ci-local rejects a snippet GitLab would reject", () => {
    const r = gitlabCiLocal(gitlab.replace("when: always", "when: sometimes"));
    expect(r.status).toBe(1);
  }, 150_000);

  it("docs/contributing/engines-and-ci.md shows the GitLab snippet as it is in .ci/gitlab-ci.yml", () => {
    expect(fencedBlockAfter("docs/contributing/engines-and-ci.md", "`.ci/gitlab-ci.yml`:", "yaml")).toBe(gitlab.trim());
  });
});
