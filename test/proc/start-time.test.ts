import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bootedAt, processStartedAt, START_TIME_PRECISION_MS } from "../../lib/proc/start-time.ts";
import { readProcStat } from "../../lib/proc/stat.ts";

// A process's start as wall-clock time, from the kernel's tick count and the boot moment. Checked on real
// processes against the clock read around their spawn, which holds however busy the machine is: the kernel
// starts the child between the two reads. The answer may stand two ticks off (the start counted in 10 ms
// ticks, the boot moment read to 10 ms): START_TIME_PRECISION_MS.
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe("processStartedAt on real processes", () => {
  it("dates a child between the clock read before its spawn and the one after it", async () => {
    for (let i = 0; i < 5; i++) {
      const before = Date.now();
      const child = spawn("sleep", ["30"]);
      await new Promise((r) => child.once("spawn", r));
      const after = Date.now();
      const at = processStartedAt(readProcStat(child.pid!)!.startTime)!.getTime();
      child.kill("SIGKILL");
      expect(at, `child ${i} started at ${at}, spawned between ${before} and ${after}`).toBeGreaterThanOrEqual(before - START_TIME_PRECISION_MS);
      expect(at).toBeLessThanOrEqual(after + START_TIME_PRECISION_MS);
    }
  });

  it("refuses a start time that is not a tick count", () => {
    expect(processStartedAt("")).toBeNull();
    expect(processStartedAt("12a")).toBeNull();
  });
});

describe("bootedAt", () => {
  it("is now minus the uptime it reads", () => {
    const root = mkdtempSync(join(tmpdir(), "outlive-uptime-"));
    dirs.push(root);
    writeFileSync(join(root, "uptime"), "1000.25 1800.00\n");
    const before = Date.now();
    const boot = bootedAt(root)!.getTime();
    const after = Date.now();
    expect(boot).toBeGreaterThanOrEqual(before - 1_000_250 - 1);
    expect(boot).toBeLessThanOrEqual(after - 1_000_250 + 1);
  });

  it("is null where the uptime cannot be read or is not a number", () => {
    const root = mkdtempSync(join(tmpdir(), "outlive-uptime-"));
    dirs.push(root);
    expect(bootedAt(root)).toBeNull();
    writeFileSync(join(root, "uptime"), "soon\n");
    expect(bootedAt(root)).toBeNull();
  });

  it("agrees with the boot moment this machine reports in whole seconds", () => {
    const btime = Number(/^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"))![1]) * 1000;
    expect(Math.abs(bootedAt()!.getTime() - btime)).toBeLessThan(1000 + START_TIME_PRECISION_MS);
  });
});
