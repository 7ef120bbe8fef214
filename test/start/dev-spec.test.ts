import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkRestartPolicy, restartDelays } from "../../lib/start/restart-policy.ts";
import { checkRunSpec, type RunSpec } from "../../lib/start/run-spec.ts";
import { readEnvFile } from "../../lib/start/env-file.ts";
import { specDifferences } from "../../lib/start/spec-digest.ts";
import { checkLimits, cpuMax, cpuQuota, limitEventsOf } from "../../lib/limits/limits.ts";

const dir = mkdtempSync(join(tmpdir(), "outlive-dev-spec-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const limits = { ceilingSeconds: 86400 };
const check = (extra: Partial<RunSpec>) => checkRunSpec({ argv: ["true"], cwd: dir, ...extra } as RunSpec, limits);
const bad = (name: string, expected: string, v: unknown) => new Error(`${name}: ${expected}, got ${JSON.stringify(v)}`);

describe("a dev server's run spec, checked at the door", () => {
  it("refuses each bad value with E_BAD_OPTION naming the field", () => {
    const cases: Array<[Partial<RunSpec>, RegExp]> = [
      [{ readyLog: "[" }, /`readyLog` to be a regular expression that compiles/],
      [{ readyPort: 70000 }, /`readyPort` to be a TCP port/],
      [{ readyHttp: "file:///etc/passwd" }, /`readyHttp` to be an http:\/\/ or https:\/\/ URL/],
      [{ waitReady: true }, /`waitReady` to be given with readyLog/],
      [{ ensure: true }, /`ensure` to be given with a key/],
      [{ restart: "sometimes" as never }, /`restart` to be "on-failure" or "always"/],
      [{ restart: "always", restartMax: 0 }, /`restartMax` to be an integer from 1 to 10000/],
      [{ restart: "always", restartMax: -3 }, /`restartMax`/],
      [{ restart: "always", restartDelaySeconds: 0 }, /`restartDelaySeconds` to be a number of seconds from 0.001/],
      [{ restart: "always", restartDelaySeconds: -1 }, /`restartDelaySeconds`/],
      [{ restart: "always", restartDelaySeconds: 2, restartDelayMaxSeconds: 1 }, /`restartDelayMaxSeconds` to be at least restartDelaySeconds/],
      [{ restartMax: 3 }, /`restartMax` to be given with restart/],
      [{ cpuCores: 0 }, /`cpuCores` to be a number of cores/],
      [{ pidsMax: 0 }, /`pidsMax` to be an integer from 1/],
      [{ envFile: "relative/.env" }, /`envFile` to be an absolute path/],
      [{ envFile: join(dir, "missing.env") }, /`envFile` to be a readable dotenv file \(ENOENT: cannot read it\)/],
    ];
    for (const [extra, message] of cases) {
      let error: { code?: string; message?: string } = {};
      try {
        check(extra);
      } catch (e) {
        error = e as typeof error;
      }
      expect(error.code, JSON.stringify(extra)).toBe("E_BAD_OPTION");
      expect(error.message, JSON.stringify(extra)).toMatch(message);
    }
  });

  it("reads an env file with dotenv's parse, refuses a malformed one, and keeps only a digest of its bytes", () => {
    const good = join(dir, "good.env");
    writeFileSync(good, "# comment\nPORT=5173\nexport TOKEN='s3cret'\nMULTI=\"a\nb\"\nEMPTY=\n");
    const read = readEnvFile(good);
    expect(read.values).toEqual({ PORT: "5173", TOKEN: "s3cret", MULTI: "a\nb", EMPTY: "" });
    expect(read.digest).toMatch(/^[0-9a-f]{64}$/);
    const malformed = join(dir, "bad.env");
    writeFileSync(malformed, "PORT=1\njust words\n");
    expect(() => check({ envFile: malformed })).toThrow(/`envFile` to be a readable dotenv file \(line 2 is not NAME=value, a comment or blank: "just words"\)/);
    writeFileSync(malformed, Buffer.from([0x41, 0x3d, 0xff, 0x0a]));
    expect(() => check({ envFile: malformed })).toThrow(/not UTF-8/);
    const spec = check({ envFile: good, env: { PORT: "8080" } });
    expect(spec.envFile?.values.TOKEN).toBe("s3cret");
    // The spec's digest changes with the file's contents, not with its name.
    writeFileSync(join(dir, "same.env"), "# comment\nPORT=5173\nexport TOKEN='s3cret'\nMULTI=\"a\nb\"\nEMPTY=\n");
    expect(check({ envFile: join(dir, "same.env"), env: { PORT: "8080" } }).specDigest).toBe(spec.specDigest);
    writeFileSync(join(dir, "other.env"), "TOKEN=other\n");
    expect(check({ envFile: join(dir, "other.env"), env: { PORT: "8080" } }).specDigest).not.toBe(spec.specDigest);
    expect(spec.specDigest).not.toContain("s3cret");
  });

  it("digests the same spec alike, whatever order its env was given in, and says what differs", () => {
    const a = check({ env: { A: "1", B: "2" }, readyPort: 5173, restart: "on-failure" });
    expect(check({ env: { B: "2", A: "1" }, readyPort: 5173, restart: "on-failure" }).specDigest).toBe(a.specDigest);
    for (const other of [{ env: { A: "1", B: "3" } }, { readyPort: 5174 }, { restart: "always" as const }, { cpuCores: 0.5 }, { argv: ["false"] }]) {
      expect(check({ env: { A: "1", B: "2" }, readyPort: 5173, restart: "on-failure", ...other }).specDigest, JSON.stringify(other)).not.toBe(a.specDigest);
    }
    expect(specDifferences({ ...a, command: { argv: ["vite"] } }, a)).toEqual(["command"]);
    expect(specDifferences(a, { ...a, ready: null, restart: null })).toEqual(["readiness", "restart"]);
    expect(specDifferences(a, a)).toEqual(["env"]);
  });

  it("a policy's delays double from the first to the cap, as the shim waits them", () => {
    const p = checkRestartPolicy({ restart: "on-failure", restartMax: 6, restartDelaySeconds: 0.25, restartDelayMaxSeconds: 2 }, bad)!;
    expect(p).toEqual({ when: "on-failure", max: 6, delayMs: 250, delayMaxMs: 2000 });
    expect(restartDelays(p)).toEqual([250, 500, 1000, 2000, 2000, 2000]);
    expect(checkRestartPolicy({ restart: "always", restartDelaySeconds: 60 }, bad)).toMatchObject({ delayMs: 60_000, delayMaxMs: 60_000 });
  });

  it("limits: cores as cpu.max and CPUQuota=, counters read from pids.events and cpu.stat", () => {
    expect(checkLimits({ cpuCores: 0.5, pidsMax: 32 }, bad)).toEqual({ cpuCores: 0.5, pidsMax: 32 });
    expect(() => checkLimits({ cpuCores: 0.001 }, bad)).toThrow(/^cpuCores/);
    expect([cpuMax(0.5), cpuMax(0.01), cpuMax(3)]).toEqual(["50000 100000", "1000 100000", "300000 100000"]);
    expect([cpuQuota(0.5), cpuQuota(2)]).toEqual(["50%", "200%"]);
    expect(limitEventsOf({ cpuCores: null, pidsMax: 4 }, "max 7\n", "nr_throttled 3\n")).toEqual({ forksRefused: 7, cpuThrottledPeriods: null, cpuThrottledUsec: null });
  });
});
