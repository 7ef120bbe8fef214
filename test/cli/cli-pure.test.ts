import { describe, expect, it } from "vitest";
import { OutliveError } from "../../lib/errors.ts";
import { reportedError, wantsJson } from "../../scripts/cli/exit-codes.ts";
import { ago, span } from "../../scripts/cli/relative-time.ts";
import { commandLine, durationMsOf, shorten, timeCell } from "../../scripts/cli/task-table.ts";
import { UsageError } from "../../scripts/cli/usage-error.ts";

const NOW = Date.parse("2026-12-02T12:00:00.000Z");
const record = (fields: Record<string, unknown>) =>
  ({ state: "running", command: { argv: ["sleep", "600"] }, createdAt: "2026-12-02T11:57:00.000Z", startedAt: "2026-12-02T11:57:00.000Z", finishedAt: null, ...fields }) as never;

describe("the CLI's pure decisions", () => {
  it("spans read as people read them", () => {
    expect([span(0), span(-5), span(420), span(9_960), span(12_300), span(192_000), span(7_500_000), span(90_000_000)]).toEqual(["0s", "0s", "0.4s", "9.9s", "12s", "3m12s", "2h05m", "1d01h"]);
    expect(ago("2026-12-02T11:59:48.000Z", NOW)).toBe("12s ago");
  });

  it("maps every kind of error to one exit code, and leaves a bug to crash", () => {
    expect(reportedError(new UsageError("x"))).toEqual({ code: "E_USAGE", message: "x", exitCode: 2 });
    expect(reportedError(new OutliveError("E_BAD_ID", "b"))?.exitCode).toBe(2);
    expect(reportedError(new OutliveError("E_BAD_OPTION", "b"))?.exitCode).toBe(2);
    for (const code of ["E_NO_TASK", "E_TASK_LIVE", "E_STORAGE", "E_STORAGE_LOCKED", "E_NO_STORAGE"]) expect(reportedError(new OutliveError(code, "m"))?.exitCode, code).toBe(1);
    expect(reportedError(new OutliveError("E_NOT_FOUND", "m"))?.exitCode).toBe(127);
    expect(reportedError(Object.assign(new Error("too many"), { code: "EMFILE" }))).toEqual({ code: "EMFILE", message: "too many; raise the open-file limit (ulimit -n)", exitCode: 1 });
    expect(reportedError(new OutliveError("E_NOT_EXECUTABLE", "m"))?.exitCode).toBe(126);
    expect(reportedError(new TypeError("a bug"))).toBeNull();
  });

  it("--json counts only before --", () => {
    expect(wantsJson(["x", "--json"])).toBe(true);
    expect(wantsJson(["--", "echo", "--json"])).toBe(false);
  });

  it("the table's command, time and duration", () => {
    expect(commandLine(record({ command: { argv: ["sh", "-c", "echo 'hi'; exit 3", ""] } }))).toBe(`sh -c 'echo '\\''hi'\\''; exit 3' ''`);
    expect(commandLine(record({ command: { shell: "a\n  b" } }))).toBe("a b");
    expect(shorten("abcdef", 4)).toBe("abc…");
    expect(timeCell(record({}), NOW)).toBe("up 3m00s");
    const ended = record({ state: "exited", finishedAt: "2026-12-02T11:59:00.000Z" });
    expect(durationMsOf(ended)).toBe(120_000);
    expect(timeCell(ended, NOW)).toBe("ran 2m00s, 1m00s ago");
    // The record's own duration wins over what the times say.
    expect(timeCell(record({ state: "exited", finishedAt: "2026-12-02T11:59:00.000Z", durationMs: 1500 }), NOW)).toBe("ran 1.5s, 1m00s ago");
  });
});
