import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseCommandPid, readCommandPid } from "../../lib/spawn/command-pid.ts";
import { parseRecord } from "../../lib/store/record/parse-record.ts";
import { taskPaths } from "../../lib/store/layout.ts";

const root = mkdtempSync(join(tmpdir(), "outlive-cmdpid-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the command's pid file", () => {
  it("is read only as a whole line the wrapper's one echo writes", () => {
    expect(parseCommandPid("4242\n")).toBe(4242);
    for (const text of ["", "42", "0\n", "-1\n", "4242\n4243\n", "x\n", "01\n"]) expect(parseCommandPid(text), JSON.stringify(text)).toBeNull();
  });

  it("is absent, a symlink or a FIFO: no pid, and no hang", () => {
    const paths = taskPaths(root, "t-1");
    mkdirSync(paths.io, { recursive: true });
    expect(readCommandPid({ pty: null }, paths)).toBeNull();
    writeFileSync(join(root, "elsewhere"), "77\n");
    symlinkSync(join(root, "elsewhere"), paths.commandPid);
    expect(readCommandPid({ pty: null }, paths)).toBeNull();
    rmSync(paths.commandPid);
    expect(spawnSync("mkfifo", [paths.commandPid]).status).toBe(0);
    expect(readCommandPid({ pty: null }, paths)).toBeNull();
    rmSync(paths.commandPid);
    writeFileSync(paths.commandPid, "77\n");
    expect(readCommandPid({ pty: null }, paths)).toBe(77);
  });
});

describe("commandPid in a record", () => {
  const base = JSON.parse(JSON.stringify({
    schemaVersion: 1, id: "t-1", key: null, generation: null, command: { argv: ["sleep", "1"] }, cwd: "/", state: "running",
    exitCode: null, reason: null, createdAt: "2026-12-01T00:00:00.000Z", startedAt: "2026-12-01T00:00:00.000Z", finishedAt: null,
    lastOutputAt: null, outputTail: null, timeoutSeconds: null, deadlineAt: "2026-12-02T00:00:00.000Z", deadlineIsTimeout: false,
    memoryMaxBytes: null, pid: 10, pgid: 10, startTime: "5", bootId: "b", incarnation: "i-1", supervisorCgroup: null,
    placement: "process-group", location: {}, killStartedAt: null, killReason: null, killState: null, acknowledgedAt: null,
  }));

  it("is optional: a record without it reads, one with it reads, a bad one is named", () => {
    expect(parseRecord(JSON.stringify(base))).toMatchObject({ ok: true });
    expect(parseRecord(JSON.stringify({ ...base, commandPid: 12 }))).toMatchObject({ ok: true, record: { commandPid: 12 } });
    const bad = parseRecord(JSON.stringify({ ...base, commandPid: "12" }));
    expect(bad).toMatchObject({ ok: false, problem: { kind: "corrupt" } });
    expect(!bad.ok && bad.problem.reason).toContain('"commandPid"');
  });
});
