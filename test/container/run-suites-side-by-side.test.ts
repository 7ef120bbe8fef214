import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isSameProcess } from "../../lib/proc/identity.ts";
import { cannotRunHereReason, resolveOptions } from "../../harness/host/container/mod.ts";
import type { NspawnState } from "../../harness/host/container/engine/nspawn/nspawn.ts";
import { loadState } from "../../harness/host/container/state.ts";
import { runSuites } from "../../harness/host/run-suites.ts";
import { projectRoot } from "../../harness/shared/project-root.ts";
import { waitFor } from "../support/wait.ts";

const missing = await cannotRunHereReason(undefined, "nspawn");
if (missing) console.log(`test/container/run-suites-side-by-side: skipping: ${missing}`);

const cacheDir = () => resolveOptions({ engine: "nspawn" }).cacheDir;
const UP = /^(bookworm|trixie): nspawn (\S+) up in /;

/** Nothing of a machine left on the host: its nspawn process and its cgroups. */
function gone(m: NspawnState): boolean {
  return !isSameProcess(m.nspawn) && m.cgroupDirs.every((dir) => !existsSync(dir));
}

describe.skipIf(missing !== null)("scenarios on two suites side by side (--side-by-side)", () => {
  it("boots both suites' machines before either's scenario ends, gives the results in the suites' order, and leaves nothing", async () => {
    const lines: string[] = [];
    const machines: NspawnState[] = [];
    const log = (line: string) => {
      lines.push(line);
      const up = UP.exec(line);
      if (up) machines.push(loadState(cacheDir(), up[2]!) as NspawnState);
    };
    const results = await runSuites({ names: ["restart-adopt"], suites: ["bookworm", "trixie"], sideBySide: true, container: { engine: "nspawn" }, log });
    expect(results.map((r) => [r.name, r.suite, r.verdict]), lines.join("\n")).toEqual([
      ["restart-adopt", "bookworm", "pass"],
      ["restart-adopt", "trixie", "pass"],
    ]);
    // Side by side: both machines were up before the first verdict (one after the other, trixie's boots after bookworm's PASS).
    const firstVerdict = lines.findIndex((l) => /^restart-adopt on (bookworm|trixie): (PASS|FAIL)/.test(l));
    const ups = lines.map((l, i) => (UP.test(l) ? i : -1)).filter((i) => i >= 0);
    expect(ups, lines.join("\n")).toHaveLength(2);
    expect(Math.max(...ups), lines.join("\n")).toBeLessThan(firstVerdict);
    expect(machines.map((m) => m.name)).toHaveLength(2);
    for (const m of machines) expect(gone(m), m.name).toBe(true);
  }, 10 * 60_000);

  it("a SIGTERM while both suites run ends both machines, then the run (exit 130)", async () => {
    // The CLI in a process of its own, as a person (or CI's timeout) would end it.
    const child = spawn(process.execPath, [join(projectRoot(), "dist/harness/run-scenarios.js"), "restart-adopt", "--engine", "nspawn", "--side-by-side"], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (b: Buffer) => (output += b.toString()));
    child.stderr.on("data", (b: Buffer) => (output += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const ups = () => output.split("\n").map((l) => UP.exec(l)).filter((m) => m !== null);
    await waitFor("both suites' machines to be up", () => ups().length === 2, 5 * 60_000);
    const machines = ups().map((m) => loadState(cacheDir(), m[2]!) as NspawnState);
    child.kill("SIGTERM");
    expect(await exited, output).toBe(130);
    for (const m of machines) expect(gone(m), `${m.name}\n${output}`).toBe(true);
  }, 10 * 60_000);
});
