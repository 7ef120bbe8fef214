import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { XMLParser } from "fast-xml-parser";
import { afterAll, describe, expect, it } from "vitest";
import { hostEngineMissing } from "../../harness/host/container/engine/host/host.ts";
import { junitXml } from "../../harness/host/junit.ts";
import { runToEnd } from "../support/run-to-end.ts";

const root = join(__dirname, "..", "..");
const temp = mkdtempSync(join(tmpdir(), "outlive-junit-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** Attributes as `@_name`, and every testsuite/testcase as an array however many there are. */
const parser = new XMLParser({
  ignoreAttributes: false,
  isArray: (name) => ["testsuite", "testcase"].includes(name),
});

interface Case { "@_name": string; "@_classname": string; skipped?: { "@_message"?: string } | string; failure?: { "@_message"?: string } | string }
function parse(file: string): { suites: { "@_name": string; testcase?: Case[] }[]; root: Record<string, string> } {
  const doc = parser.parse(readFileSync(file, "utf8"));
  return { suites: doc.testsuites.testsuite ?? [], root: doc.testsuites };
}
const cases = (file: string) => parse(file).suites.flatMap((s) => s.testcase ?? []);

describe("JUnit output", () => {
  it("the scenario runner writes one testcase per scenario and version, with the skip reason", async () => {
    const file = join(temp, "scenarios.xml");
    // --engine host is the one engine whose verdict this host decides cheaply: skipped where PID 1 is not systemd.
    const missing = await hostEngineMissing();
    const r = await runToEnd(process.execPath, [join(root, "dist/harness/run-scenarios.js"), "arguments", "startup-cleanup", "--engine", "host", "--junit", file], { timeoutMs: 300_000 });
    expect(existsSync(file), r.stderr).toBe(true);
    const got = cases(file);
    expect(got.map((c) => c["@_name"].replace(/ \(systemd .*\)$/, ""))).toEqual(["arguments", "startup-cleanup"]);
    expect(got.every((c) => c["@_classname"] === "scenarios.host.host")).toBe(true);
    if (missing) {
      for (const c of got) expect(typeof c.skipped === "object" ? c.skipped["@_message"] : c.skipped).toContain(missing.slice(0, 40));
    } else {
      expect(r.status).toBe(0);
      for (const c of got) expect(c.skipped ?? c.failure).toBeUndefined();
    }
  }, 320_000);

  it("a failure keeps its reason and text that XML cannot hold as is", () => {
    const xml = junitXml([
      { name: "restart-adopt", suite: "bookworm", systemd: 252, verdict: "fail", why: `exit 1 <"not" & 'adopted'>`, durationMs: 1500, reportDir: "/r/a" },
      { name: "restart-adopt", suite: "trixie", systemd: 257, verdict: "pass", why: null, durationMs: 900, reportDir: "/r/b" },
    ], "podman");
    const file = join(temp, "fail.xml");
    writeFileSync(file, xml);
    const { suites, root: top } = parse(file);
    expect(top["@_tests"]).toBe("2");
    expect(top["@_failures"]).toBe("1");
    expect(suites.map((s) => s["@_name"])).toEqual(["scenarios.podman.bookworm", "scenarios.podman.trixie"]);
    const [failed, passed] = suites.map((s) => s.testcase![0]!);
    expect(failed!["@_name"]).toBe("restart-adopt (systemd 252)");
    expect((failed!.failure as { "@_message": string })["@_message"]).toBe(`exit 1 <"not" & 'adopted'>`);
    expect(passed!["@_name"]).toBe("restart-adopt (systemd 257)");
    expect(passed!.failure).toBeUndefined();
  });

  it("npm test -- --junit DIR writes the vitest and Deno suites' JUnit, matching their counts", async () => {
    const dir = join(temp, "npm-test");
    const r = await runToEnd(process.execPath, [join(root, "dist/scripts/test-all.js"), "--no-scenarios", "--junit", dir, "test/proc/stat.test.ts"], {
      cwd: root, timeoutMs: 300_000, env: { ...process.env, OUTLIVE_BUILT: "1" },
    });
    // Whatever the suites' verdicts (another area's failing test must not hide this one), every test they ran is in the XML.
    expect(r.stdout).toMatch(/^\d+ passed, \d+ failed, \d+ skipped$/m);
    const vitest = cases(join(dir, "vitest.xml"));
    const deno = cases(join(dir, "deno.xml"));
    const tally = (suite: string) => {
      const m = new RegExp(`^${suite}\\s+(\\d+) passed, (\\d+) failed, (\\d+) skipped`, "m").exec(r.stdout);
      return m ? Number(m[1]) + Number(m[2]) + Number(m[3]) : NaN;
    };
    expect(vitest.length).toBeGreaterThan(0);
    expect(vitest.length).toBe(tally("node \\(vitest\\)"));
    expect(vitest.every((c) => c["@_classname"].includes("test/proc/stat.test.ts"))).toBe(true);
    expect(deno.length).toBeGreaterThan(0);
    expect(deno.length).toBe(tally("deno \\(deno test\\)"));
  }, 320_000);
});
