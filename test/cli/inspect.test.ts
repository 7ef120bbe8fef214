import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { outliveCli, tempDir } from "../support/cli.ts";

const temp = tempDir("outlive-inspect-");
const storage = join(temp.dir, "storage");
const outlive = (...args: string[]) => outliveCli([args[0], "--storage", storage, ...args.slice(1)]);
afterAll(() => {
  outlive("stop-all");
  temp.remove();
});

describe("outlive inspect", () => {
  it("prints the whole record for people: env names never values, key and generation, timeout, pids, output sizes, times", () => {
    const run = outlive("run", "--id", "whole", "--key", "web", "--timeout", "90s", "--env", "SECRET=hunter2", "--env", "B=1", "--", "sh", "-c", "echo hello; exit 3");
    expect(run.code, run.err).toBe(0);
    expect(outlive("wait", "whole").code).toBe(3);
    const shown = outlive("inspect", "whole");
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).not.toContain("hunter2");
    const line = (name: string) => shown.out.split("\n").find((l) => l.startsWith(`${name}:`))?.slice(name.length + 1).trim();
    expect(line("id")).toBe("whole");
    expect(line("state")).toBe("exited");
    expect(line("exit code")).toBe("3");
    expect(line("command")).toContain("sh -c 'echo hello; exit 3'");
    expect(line("cwd")).toBe(process.cwd());
    expect(line("env set")).toBe("B, SECRET (values not shown)");
    expect(line("key")).toBe("web (generation 1)");
    expect(line("timeout")).toBe("1m30s (90 s)");
    expect(line("deadline")).toMatch(/^\d{4}-\d\d-\d\dT.*Z \(its timeout\)$/);
    expect(line("memory cap")).toBe("none");
    expect(line("placement")).toBe("process-group");
    expect(line("pid")).toMatch(/^\d+ \(group leader, pgid \d+\)$/);
    expect(line("stdout")).toBe("6 bytes");
    expect(line("stderr")).toBe("0 bytes");
    expect(line("started")).toMatch(/Z \(.+ ago\)$/);
    expect(line("finished")).toMatch(/Z \(.+ ago\)/);
    expect(line("duration")).toMatch(/^\S+s \(\d+ ms\)$/);
    expect(line("reason")).toBe("exited with code 3");
  });

  it("--json prints exactly the record as stored, one object a line", () => {
    const stored = JSON.parse(readFileSync(join(storage, "tasks", "whole", "record.json"), "utf8"));
    const json = outlive("inspect", "whole", "--json");
    expect(json.code, json.err).toBe(0);
    expect(JSON.parse(json.out)).toEqual(stored);
    expect(stored.envNames).toEqual(["B", "SECRET"]);
    expect(json.out).not.toContain("hunter2");
  });

  it("shows several ids; an unknown one is said on stderr, exit 1, and the others are still shown", () => {
    expect(outlive("run", "--id", "second", "--", "true").code).toBe(0);
    const r = outlive("inspect", "whole", "nosuch", "second");
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^id: +whole$/m);
    expect(r.out).toMatch(/^id: +second$/m);
    expect(r.err.trim()).toBe(`outlive inspect: No task "nosuch" in ${storage} [E_NO_TASK]`);
    const json = outlive("inspect", "second", "nosuch", "whole", "--json");
    expect(json.code).toBe(1);
    expect(json.out.trim().split("\n").map((l) => JSON.parse(l).id)).toEqual(["second", "whole"]);
    expect(JSON.parse(json.err)).toEqual({ error: { code: "E_NO_TASK", message: `No task "nosuch" in ${storage}`, exitCode: 1 } });
  });

  it("shows the fields later writers add when a record has them, and reads a record without envNames", () => {
    const file = join(storage, "tasks", "second", "record.json");
    const record = JSON.parse(readFileSync(file, "utf8"));
    delete record.envNames;
    const withLater = { ...record, commandPid: 4242, finishedAtSource: "exit-marker", endedAfter: record.startedAt, durationMs: 1234 };
    // A record written by an outlive that knows these fields; this one must show them, not require them.
    writeFileSync(file, JSON.stringify(withLater));
    const r = outlive("inspect", "second");
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^command pid: +4242$/m);
    expect(r.out).toMatch(/^finished: +\S+Z \(.+ ago\), from exit-marker$/m);
    expect(r.out).toMatch(/^ended after: +\S+Z/m);
    expect(r.out).toMatch(/^duration: +1\.2s \(1234 ms\)$/m);
    expect(r.out).not.toMatch(/^env set:/m);
    expect(outlive("ps").out).toMatch(/^second\s+exited\s+0\s+4242\s/m);
  });

  it("on a storage that does not exist says so, exit 1, and makes nothing", () => {
    const missing = join(temp.dir, "typo");
    const r = outliveCli(["inspect", "--storage", missing, "x"]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`no storage at ${missing}`);
    expect(existsSync(missing)).toBe(false);
  });
});
