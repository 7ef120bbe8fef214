import { describe, expect, it } from "vitest";
import { formatSummary } from "../../harness/host/run-suites.ts";
import type { ScenarioResult } from "../../harness/host/run-in.ts";
import { formatTable } from "../../harness/shared/table.ts";

// The runner's summary lost its alignment at a 27-character scenario name (columns were padded to 22).
const result = (name: string, verdict: ScenarioResult["verdict"], durationMs: number, why: string | null = null): ScenarioResult =>
  ({ name, suite: "bookworm", systemd: 252, verdict, why, durationMs, reportDir: "" }) as ScenarioResult;

/** Where each column of a line starts, given the header's column names. */
function starts(line: string, header: string): number[] {
  const names = header.split(/ {2,}/);
  return names.map((n) => header.indexOf(n)).map((at, i) => (i === 0 ? 0 : at));
}

describe("the scenario runner's summary", () => {
  it("sizes each column to its widest cell, however long a scenario's name", () => {
    const long = "census-fail-closed-and-more-than-27"; // 35 characters
    const text = formatSummary([
      result("soak", "pass", 61_200),
      result(long, "fail", 1_500, "a check failed"),
      result("restart-adopt-deno-twenty7", "skip", 12, "no engine"), // 27 characters
    ]);
    const [header, ...lines] = text.split("\n");
    const rows = lines.slice(0, 3);
    const at = starts(rows[1], header);
    // Every row's suite, systemd and verdict cells begin where the header's do.
    for (const row of rows) {
      for (const [i, word] of [[1, "bookworm"], [2, "252"]] as const) expect(row.slice(at[i]).startsWith(word), `${row} @${i}`).toBe(true);
      expect(row.slice(0, long.length + 1).trimEnd().length).toBeLessThanOrEqual(long.length);
    }
    expect(header.indexOf("suite")).toBe(long.length + 2);
    // The time column is aligned right: every row's time ends where the header's "time" does.
    const timeEnd = header.indexOf("time") + "time".length;
    for (const row of rows) expect(row.slice(0, timeEnd)).toMatch(/\d+\.\ds$/);
    expect(lines[3]).toBe("1 passed, 1 failed, 1 skipped");
  });

  it("formatTable counts characters, not UTF-16 units, and pads no last column", () => {
    expect(formatTable([["a", "b"], ["ü→x", "y"]]).split("\n")).toEqual(["a    b", "ü→x  y"]);
    expect(formatTable([["n", "t"], ["x", "1.5s"], ["y", "12.0s"]], { right: [1] }).split("\n")).toEqual(["n      t", "x   1.5s", "y  12.0s"]);
  });
});
