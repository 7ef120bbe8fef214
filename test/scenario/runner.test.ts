import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cannotRunHereReason } from "../../harness/host/container/mod.ts";
import { cli } from "./cli-process.ts";
import { leftoversOf } from "./leftovers.ts";
import { ROOTFS_READY_MS, rootfsReady } from "./rootfs-ready.ts";

// `outlive scenario run` as a user calls it, in a separate process, on bad input and on a
// foreign module's whole life. Skipped, with the reason printed, where containers cannot run.
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const FIXTURES = join(ROOT, "test/scenario/fixtures");
const missing = await cannotRunHereReason();
if (missing) console.log(`test/scenario/runner: skipping: ${missing}`);
const scratch = mkdtempSync(join(tmpdir(), "outlive-runner-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Result {
  name: string;
  verdict: string;
  why: string | null;
  file?: string;
}

describe.skipIf(missing !== null)("outlive scenario run on bad input", () => {
  beforeAll(() => rootfsReady(["bookworm", "trixie"]), ROOTFS_READY_MS);

  it("names the file and the cause in one line, fails each, and leaves nothing behind", async () => {
    const json = join(scratch, "bad.json");
    const files = ["does-not-exist.ts", "no-export.ts", "throws.ts", "hangs.ts", "module-missing.ts", "module-never-ready.ts"].map((f) => join(FIXTURES, f));
    const r = await cli([...files, "--systemd", "257", "--reports", join(scratch, "reports"), "--json", json]);
    expect(r.code, r.stderr).toBe(1);
    const results: Result[] = JSON.parse(readFileSync(json, "utf8")).results;
    const why = (name: string) => results.find((x) => x.name === name || x.file?.endsWith(`/${name}`));
    expect(results.every((x) => x.verdict === "fail"), JSON.stringify(results)).toBe(true);
    expect(r.stderr).toMatch(/^outlive scenario: .*does-not-exist\.ts: no such file$/m);
    expect(r.stderr).toMatch(/^outlive scenario: .*no-export\.ts: exports no scenario/m);
    expect(r.stderr).toMatch(/^outlive scenario: .*throws\.ts: threw at import: boom at import$/m);
    expect(why("hangs")?.why).toMatch(/did not finish within 3000 ms/);
    expect(why("module-missing")?.why).toMatch(/module "\/nonexistent\/my-supervisor" could not be started: no such file/);
    expect(why("module-never-ready")?.why).toMatch(/"sleep" was not ready within 2000 ms/);
    expect(leftoversOf(r.pid)).toEqual([]);
  }, 300_000);

  it("runs a foreign module through restart, crash, killModule and stop, in the module cgroup", async () => {
    const json = join(scratch, "foreign.json");
    const r = await cli([join(FIXTURES, "foreign-life.ts"), "--systemd", "252", "--reports", join(scratch, "reports"), "--json", json]);
    const results: Result[] = JSON.parse(readFileSync(json, "utf8")).results;
    expect(results.map((x) => x.verdict), r.stderr).toEqual(["pass"]);
    expect(r.code).toBe(0);
    const report = JSON.parse(readFileSync(join(scratch, "reports/foreign-life-bookworm/report.json"), "utf8"));
    expect(report.incarnations.map((i: { placement: string }) => i.placement)).toEqual(["foreign", "foreign", "foreign", "foreign"]);
    expect(report.leftovers).toEqual([]);
    expect(leftoversOf(r.pid)).toEqual([]);
  }, 300_000);
});
