import type { ScenarioResult } from "./run-in.ts";

/** XML text and attribute escaping (the five predefined entities; control characters CI parsers reject are dropped). */
function escapeXml(text: string): string {
  return text
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

/**
 * JUnit XML for CI: one testsuite per systemd version (suite), one testcase
 * per scenario in it, named `NAME (systemd V)`; a skip keeps its reason in
 * `<skipped message>`, a failure its first reason in `<failure message>`
 * and the report's path in `<system-out>`. Pure: the results in, text out.
 *
 * @example
 * ```ts
 * import { junitXml } from "./junit.ts";
 * console.log(junitXml([{ name: "restart-adopt", suite: "bookworm", systemd: 252, verdict: "pass", why: null, durationMs: 1200, reportDir: "/r" }], "nspawn"));
 * ```
 */
export function junitXml(results: ScenarioResult[], engine: string): string {
  const bySuite = new Map<string, ScenarioResult[]>();
  for (const r of results) bySuite.set(r.suite, [...(bySuite.get(r.suite) ?? []), r]);
  const count = (rs: ScenarioResult[], v: string) => rs.filter((r) => r.verdict === v).length;
  const seconds = (rs: ScenarioResult[]) => (rs.reduce((n, r) => n + r.durationMs, 0) / 1000).toFixed(3);
  const lines = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="outlive scenarios (${escapeXml(engine)})" tests="${results.length}" failures="${count(results, "fail")}" skipped="${count(results, "skip")}" errors="0" time="${seconds(results)}">`,
  ];
  for (const [suite, rs] of bySuite) {
    const version = rs.find((r) => r.systemd !== null)?.systemd ?? "?";
    const suiteName = `scenarios.${engine}.${suite}`;
    lines.push(`  <testsuite name="${escapeXml(suiteName)}" tests="${rs.length}" failures="${count(rs, "fail")}" skipped="${count(rs, "skip")}" errors="0" time="${seconds(rs)}">`);
    for (const r of rs) {
      const name = `${r.name} (systemd ${r.systemd ?? version})`;
      const open = `    <testcase classname="${escapeXml(suiteName)}" name="${escapeXml(name)}" time="${(r.durationMs / 1000).toFixed(3)}"`;
      const report = r.reportDir ? `      <system-out>${escapeXml(`report: ${r.reportDir}/report.json`)}</system-out>` : null;
      if (r.verdict === "pass") {
        lines.push(report ? `${open}>\n${report}\n    </testcase>` : `${open}/>`);
      } else {
        const tag = r.verdict === "skip" ? "skipped" : "failure";
        const body = [`      <${tag} message="${escapeXml(r.why ?? (r.verdict === "skip" ? "skipped" : "failed"))}"/>`, ...(report ? [report] : [])];
        lines.push(`${open}>\n${body.join("\n")}\n    </testcase>`);
      }
    }
    lines.push(`  </testsuite>`);
  }
  lines.push(`</testsuites>`, "");
  return lines.join("\n");
}
