import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { isSameProcess } from "../../lib/proc/identity.ts";
import { cannotRunHereReason, resolveOptions } from "../../harness/host/container/mod.ts";
import type { NspawnState } from "../../harness/host/container/engine/nspawn/nspawn.ts";
import { loadState } from "../../harness/host/container/state.ts";
import { runSuites } from "../../harness/host/run-suites.ts";

const missing = await cannotRunHereReason(undefined, "nspawn");
if (missing) console.log(`test/container/run-suites-replace: skipping: ${missing}`);

describe.skipIf(missing !== null)("a machine that dies under a scenario", () => {
  it("fails that scenario alone: the scenarios after it run on a new machine, and both machines are gone after", async () => {
    const cacheDir = resolveOptions({ engine: "nspawn" }).cacheDir;
    const lines: string[] = [];
    const machines: NspawnState[] = [];
    let crashed = false;
    const log = (line: string) => {
      lines.push(line);
      const up = / nspawn (\S+) up in /.exec(line);
      if (up) machines.push(loadState(cacheDir, up[1]!) as NspawnState);
      // The first scenario has begun: its machine's systemd is killed from the host, as a crash would end it.
      if (!crashed && line.startsWith("restart-adopt on bookworm") && line.endsWith(": running")) {
        crashed = true;
        process.kill(machines[0]!.pid1!.pid, "SIGKILL");
      }
    };
    const results = await runSuites({ names: ["restart-adopt", "kill-escapees"], suites: ["bookworm"], container: { engine: "nspawn" }, log });
    expect(crashed).toBe(true);
    expect(results.map((r) => [r.name, r.verdict])).toEqual([["restart-adopt", "fail"], ["kill-escapees", "pass"]]);
    expect(lines.some((l) => l.includes("no longer answers; booting a new machine for the scenarios left"))).toBe(true);
    expect(machines).toHaveLength(2);
    expect(machines[0]!.name).not.toBe(machines[1]!.name);
    for (const m of machines) {
      expect(isSameProcess(m.nspawn)).toBe(false);
      for (const dir of m.cgroupDirs) expect(existsSync(dir)).toBe(false);
    }
  }, 10 * 60_000);
});
