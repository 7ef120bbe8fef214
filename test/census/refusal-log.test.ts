import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isRefusalDue, logRefusal, refusalLine, refusalStampPath, type IdleDecision } from "../../lib/census/mod.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "census-refusal-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const keep: IdleDecision = { verdict: "keep", blocking: { pid: 4242, argv: ["npm", "run", "dev"], name: "npm", why: "child-chain" } };
const noAnswer: IdleDecision = { verdict: "keep", reason: { code: "snapshot-incomplete", message: "cannot read /proc/9/stat" } };
const MIN = 60_000;

describe("refusal log", () => {
  it("writes one line with the blocking pid and command, or why the census could not answer", () => {
    expect(refusalLine("s1", keep)).toBe('outlive: idle session s1 kept up: pid 4242 runs "npm run dev"');
    expect(refusalLine("s1", noAnswer)).toContain("could not be listed (snapshot-incomplete: cannot read /proc/9/stat)");
    expect(refusalLine("s1", { verdict: "retire", servers: [] })).toBeNull();
  });

  it("logs at most once per session per 10 minutes, from a stored timestamp", async () => {
    const lines: string[] = [];
    const write = (line: string) => lines.push(line);
    const at = (now: number, sessionId = "s1") => logRefusal(keep, { dir, sessionId, now, write });
    expect((await at(0)).logged).toBe(true);
    expect((await at(1 * MIN)).logged).toBe(false);
    expect((await at(9 * MIN, "s2")).logged).toBe(true);
    expect((await at(9 * MIN + 59_999)).logged).toBe(false);
    expect((await at(10 * MIN)).logged).toBe(true);
    expect(lines).toHaveLength(3);
    expect(JSON.parse(readFileSync(refusalStampPath(dir, "s1"), "utf8"))).toEqual({ sessionId: "s1", lastLoggedAt: 10 * MIN });
  });

  it("logs again after a garbled stamp or a clock that went back, and says when it cannot store", async () => {
    writeFileSync(refusalStampPath(dir, "s1"), "{garbage");
    expect((await logRefusal(keep, { dir, sessionId: "s1", now: 5, write: () => {} })).logged).toBe(true);
    expect((await logRefusal(keep, { dir, sessionId: "s1", now: 1, write: () => {} })).logged).toBe(true);
    const blocked = join(dir, "a-file");
    writeFileSync(blocked, "");
    const r = await logRefusal(keep, { dir: blocked, sessionId: "s1", now: 0, write: () => {} });
    expect(r.logged).toBe(true);
    expect(r.error?.code).toBe("refusal-log-unwritable");
  });

  it("keeps a session id that looks like a path inside the folder", async () => {
    await logRefusal(keep, { dir, sessionId: "../../etc/x", now: 0, write: () => {} });
    expect(existsSync(refusalStampPath(dir, "../../etc/x"))).toBe(true);
    expect(refusalStampPath(dir, "../../etc/x").startsWith(dir + "/idle-refusal-")).toBe(true);
  });

  it("allows a line only when none was logged in the last interval (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.nat(60 * MIN), { maxLength: 40 }), (times) => {
        let last: number | null = null;
        const logged: number[] = [];
        for (const now of [...times].sort((a, b) => a - b)) {
          if (isRefusalDue(last, now)) (logged.push(now), (last = now));
        }
        for (let i = 1; i < logged.length; i++) expect(logged[i] - logged[i - 1]).toBeGreaterThanOrEqual(10 * MIN);
      }),
    );
  });
});
