import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { outliveCliAwaited, tempDir } from "../support/cli.ts";

const temp = tempDir("outlive-conventions-");
const storage = join(temp.dir, "storage");
// Awaited: the first test alone ran the CLI 14 times in one body, 56 s under load (see test/support/run-to-end.ts).
const outlive = (...args: string[]) => outliveCliAwaited([args[0], "--storage", storage, ...args.slice(1)]);
afterAll(async () => {
  if (existsSync(storage)) await outlive("stop-all");
  temp.remove();
});

describe("one exit code per kind of failure, and --json errors", () => {
  it("run makes the storage; a missing one is never made by a read, and every read names it (exit 1)", async () => {
    const missing = join(temp.dir, "typo");
    for (const args of [["ps"], ["ps", "--json"], ["logs", "x"], ["inspect", "x"], ["wait", "x"], ["kill", "x"], ["ack", "x"], ["rm", "x"], ["prune"], ["replay"], ["stop-all"], ["send", "x", "y"], ["resize", "x", "80", "24"]]) {
      const r = await outliveCliAwaited([args[0], "--storage", missing, ...args.slice(1)]);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.err, args.join(" ")).toContain(`no storage at ${missing}`);
      expect(r.out, args.join(" ")).toBe("");
      expect(existsSync(missing), args.join(" ")).toBe(false);
    }
    const run = await outlive("run", "--id", "first", "--", "true");
    expect(run.code, run.err).toBe(0);
    expect(existsSync(join(storage, "tasks", "first"))).toBe(true);
  });

  it("a run refused for its spec names the flag and makes no storage", async () => {
    const fresh = join(temp.dir, "never-made");
    const cases: [string[], string][] = [
      [["--max-output", "100", "--", "true"], "--max-output"],
      [["--cwd", join(temp.dir, "no-such-dir"), "--", "true"], "--cwd"],
      [["--ensure", "--", "true"], "--ensure"],
      [["--shell", "true", "--shell-path", "relative/sh"], "--shell-path"],
    ];
    for (const [args, named] of cases) {
      const r = await outliveCliAwaited(["run", "--storage", fresh, ...args]);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.err, args.join(" ")).toContain(named);
      expect(existsSync(fresh), args.join(" ")).toBe(false);
    }
  });

  it("says the same one line, for every command, of a storage path that is a file", async () => {
    const file = join(temp.dir, "a-file");
    writeFileSync(file, "not a storage\n");
    const line = `the storage path ${file} is not a directory (--storage names a directory outlive keeps its tasks in) [E_STORAGE]`;
    for (const args of [["run", "--", "true"], ["ps"], ["logs", "x"], ["inspect", "x"], ["wait", "x"], ["kill", "x"], ["rm", "-f", "x"], ["replay"]]) {
      const r = await outliveCliAwaited([args[0], "--storage", file, ...args.slice(1)]);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.err.trim(), args.join(" ")).toBe(`outlive ${args[0]}: ${line}`);
    }
    expect(readFileSync(file, "utf8")).toBe("not a storage\n");
  });

  it("an unknown task is E_NO_TASK and exit 1 for kill, send, wait, logs, inspect alike", async () => {
    for (const args of [["kill", "nosuch"], ["send", "nosuch", "x"], ["resize", "nosuch", "80", "24"], ["wait", "nosuch"], ["logs", "nosuch"], ["inspect", "nosuch"]]) {
      const r = await outlive(...args);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.err.trim(), args.join(" ")).toBe(`outlive ${args[0]}: No task "nosuch" in ${storage} [E_NO_TASK]`);
    }
  });

  it("with --json, an error is one JSON object on stderr with its code, message and exit code", async () => {
    const noTask = await outlive("kill", "nosuch", "--json");
    expect(noTask.code).toBe(1);
    expect(noTask.out).toBe("");
    expect(JSON.parse(noTask.err)).toEqual({ error: { code: "E_NO_TASK", message: `No task "nosuch" in ${storage}`, exitCode: 1 } });
    const usage = await outlive("ps", "--json", "--state", "zombie");
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.err)).toMatchObject({ error: { code: "E_USAGE", exitCode: 2, message: expect.stringContaining("--state takes one of") } });
    const badId = await outlive("run", "--json", "--id", "../etc", "--", "true");
    expect(JSON.parse(badId.err)).toMatchObject({ error: { code: "E_BAD_ID", exitCode: 2 } });
    const census = await outliveCliAwaited(["census", "not-a-pid", "--json"]);
    expect(census.code).toBe(2);
    expect(JSON.parse(census.err)).toEqual({ error: { code: "E_USAGE", message: 'PID must be a positive integer, got "not-a-pid"', exitCode: 2 } });
    // A --json after `--` is the task's, not the command's.
    const plain = await outlive("run", "--id", "../etc", "--", "echo", "--json");
    expect(plain.code).toBe(2);
    expect(plain.err).toMatch(/^outlive run: .*\[E_BAD_ID\]\n$/);
  });

  it("names on Object.prototype are unknown commands, not crashes", async () => {
    for (const name of ["toString", "constructor", "__proto__", "hasOwnProperty"]) {
      const r = await outliveCliAwaited([name]);
      expect(r.code, name).toBe(2);
      expect(r.err.trim(), name).toBe(`outlive: unknown command ${JSON.stringify(name)}; see outlive --help`);
    }
  });
});

describe("parser messages say the flag and what it takes", () => {
  it("a negative number is the flag's value, checked by the command, never 'ambiguous'", async () => {
    const r = await outlive("prune", "--keep", "-1");
    expect(r.code).toBe(2);
    expect(r.err.trim()).toBe('outlive prune: --keep takes a whole number of tasks, got "-1"');
  });

  it("an unknown flag lists the flags the command takes, without Node's -- suggestion", async () => {
    const r = await outlive("ps", "--nope");
    expect(r.code).toBe(2);
    expect(r.err).toContain("unknown flag --nope; this command takes --storage VALUE");
    expect(r.err).toContain("--state VALUE");
    expect(r.err).not.toContain('-- "');
    expect(r.err).not.toMatch(/ambiguous|positional/i);
    expect(r.err.trim().split("\n")).toHaveLength(1);
  });

  it("a missing value, a flag where a value belongs, a value for an on/off flag, a stray argument", async () => {
    expect((await outlive("ps", "--state")).err.trim()).toBe("outlive ps: --state takes a value, and none was given");
    expect((await outlive("run", "--cwd", "--pty", "--", "true")).err.trim()).toBe('outlive run: --cwd takes a value, got the flag "--pty" (write --cwd=--pty if that is the value)');
    expect((await outlive("ps", "--json=yes")).err.trim()).toBe("outlive ps: --json takes no value (it is on or off)");
    expect((await outlive("prune", "extra")).err.trim()).toBe('outlive prune: takes no arguments, got "extra"');
    expect((await outlive("ps", "t-1")).err.trim()).toBe('outlive ps: ps takes no task ids, got "t-1"; outlive inspect ID… shows tasks whole');
    for (const args of [["ps", "--state"], ["ps", "--json=yes"], ["prune", "extra"], ["ps", "t-1"]]) expect((await outlive(...args)).code).toBe(2);
  });
});

describe("durations wherever a time is taken", () => {
  it("--timeout takes 90s, 15m, 2h or plain seconds; a bad one names the flag (exit 2)", async () => {
    for (const [text, seconds] of [["1m", 60], ["90s", 90], ["2h", 7200], ["45", 45], ["1.5", 1.5]] as const) {
      const id = `timeout-${String(seconds).replace(".", "-")}`;
      expect((await outlive("run", "--id", id, "--timeout", text, "--", "true")).code, text).toBe(0);
      expect(JSON.parse((await outlive("inspect", id, "--json")).out).timeoutSeconds, text).toBe(seconds);
    }
    const bad = await outlive("run", "--timeout", "soon", "--", "true");
    expect(bad.code).toBe(2);
    expect(bad.err.trim()).toBe('outlive run: --timeout takes a duration such as 500ms, 90s, 15m, 2h or a number of seconds, got "soon"');
    expect((await outlive("wait", "timeout-60", "--timeout", "2m")).code).toBe(0);
    expect((await outlive("wait", "timeout-60", "--timeout", "later")).code).toBe(2);
    expect((await outlive("kill", "timeout-60", "--lock-wait", "1m")).code).toBe(0);
    const badWait = await outlive("kill", "timeout-60", "--lock-wait", "-1");
    expect(badWait.code).toBe(2);
    expect(badWait.err.trim()).toBe('outlive kill: --lock-wait takes a duration such as 500ms, 90s, 15m, 2h or a number of seconds, got "-1"');
  });
});

describe("--version", () => {
  it("prints outlive's version from package.json", async () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8"));
    for (const flag of ["--version", "-V"]) {
      const r = await outliveCliAwaited([flag]);
      expect(r.code).toBe(0);
      expect(r.out).toBe(`outlive ${pkg.version}\n`);
    }
  });
});
