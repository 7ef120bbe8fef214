import { chmodSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupShims, codeOf, procStat, shimUnderTest, startShim, waitForText } from "../support/shim-task.ts";
import { waitFor } from "../support/wait.ts";

// The command as the shim starts it: its argv byte for byte, its exit code, its pid, its descriptors.
const shim = shimUnderTest();
if (!shim.path) console.log(`test/shim/command.test.ts skipped: ${shim.reason}`);
const SHIM = shim.path!;

/** Prints each argument NUL-terminated, so the test sees exactly what reached the command. */
const PRINT_ARGS = ["sh", "-c", 'for a; do printf "%s\\0" "$a"; done', "sh"];

describe.skipIf(!shim.path)("outlive-shim runs the command", () => {
  afterEach(cleanupShims);

  it("passes the argv byte for byte: $HOME, quotes, newlines, empty arguments, a leading -", async () => {
    const args = ["$HOME", `it's "quoted" \\ back`, "line one\nline two", "", "-n", "  spaced  ", "ünïcode ✓", "*", "a=b"];
    const run = startShim(SHIM, { settings: { command: { argv: [...PRINT_ARGS, ...args] } } });
    expect(await codeOf(run)).toBe(0);
    expect(run.read("stdout")).toBe(args.map((a) => `${a}\0`).join(""));
    expect(run.read("stderr")).toBe("");
  });

  it("runs a shell string with SHELL -c --, so one beginning with - is the command", async () => {
    const run = startShim(SHIM, {
      settings: { command: { shell: "-x 2>/dev/null; echo \"ran in $HOME\"; printf '%s\\n' \"$0\"", shellPath: "/bin/bash" } },
      env: { ...process.env, HOME: "/some/home" },
    });
    expect(await codeOf(run)).toBe(0);
    expect(run.read("stdout")).toBe("ran in /some/home\n/bin/bash\n");
  });

  it("passes its environment to the command unchanged", async () => {
    const value = "two words\nand a line $NOT_EXPANDED";
    const run = startShim(SHIM, { settings: { command: { argv: ["sh", "-c", 'printf %s "$OUTLIVE_TEST_VALUE"'] } }, env: { PATH: process.env.PATH, OUTLIVE_TEST_VALUE: value } });
    expect(await codeOf(run)).toBe(0);
    expect(run.read("stdout")).toBe(value);
  });

  it.each([
    ["exit 0", 0, "0  \n"],
    ["exit 7", 7, "7  \n"],
    ["kill -KILL $$", 137, "137\n"],
    ["kill -TERM $$", 143, "143\n"],
  ])("records `%s` as %i in io/exit, as printf '%%-3s\\n' writes it, and exits with it", async (script, code, bytes) => {
    const run = startShim(SHIM, { settings: { command: { argv: ["sh", "-c", script] } } });
    expect(await codeOf(run)).toBe(code);
    expect(run.exitBytes()).toBe(bytes);
    expect((await run.exited).code).toBe(code);
    expect(run.has("ended")).toBe(true);
  });

  it("says `not found` (127) for a program not on PATH, in one line of stderr", async () => {
    const run = startShim(SHIM, { settings: { command: { argv: ["outlive-no-such-program", "x"] } } });
    expect(await codeOf(run)).toBe(127);
    expect(run.read("stderr")).toBe("outlive: outlive-no-such-program: not found\n");
  });

  it("says `permission denied` (126) for a file it cannot execute, by path and through PATH", async () => {
    const first = startShim(SHIM, { settings: { command: { argv: ["/bin/true"] } } });
    await codeOf(first);
    const bin = join(first.dir, "bin");
    mkdirSync(bin);
    const file = join(bin, "not-executable");
    writeFileSync(file, "#!/bin/sh\necho ran\n");
    chmodSync(file, 0o644);
    const byPath = startShim(SHIM, { settings: { command: { argv: [file] } } });
    expect(await codeOf(byPath)).toBe(126);
    expect(byPath.read("stderr")).toBe(`outlive: ${file}: permission denied\n`);
    const onPath = startShim(SHIM, { settings: { command: { argv: ["not-executable"] } }, env: { PATH: `${bin}:/usr/bin:/bin` } });
    expect(await codeOf(onPath)).toBe(126);
    expect(onPath.read("stderr")).toBe("outlive: not-executable: permission denied\n");
  });

  it("runs a file without #! with /bin/sh, as execvp does", async () => {
    const first = startShim(SHIM, { settings: { command: { argv: ["/bin/true"] } } });
    await codeOf(first);
    const file = join(first.dir, "script");
    writeFileSync(file, "echo from a plain script: $1\n");
    chmodSync(file, 0o755);
    const run = startShim(SHIM, { settings: { command: { argv: [file, "arg"] } } });
    expect(await codeOf(run)).toBe(0);
    expect(run.read("stdout")).toBe("from a plain script: arg\n");
  });

  it("writes the command's own pid to io/command-pid, and none when not asked", async () => {
    const run = startShim(SHIM, { settings: { command: { argv: ["sh", "-c", "echo $$; exec sleep 60"] } } });
    await waitForText(run, "stdout", "\n");
    const pid = Number(run.read("stdout").trim());
    await waitFor("io/command-pid", () => run.read("command-pid") !== "");
    expect(run.read("command-pid")).toBe(`${pid}\n`);
    // The same process, now the command it exec'd: in the shim's group.
    await waitFor("the exec of sleep", () => readFileSync(`/proc/${pid}/cmdline`, "latin1") === "sleep\x0060\x00");
    expect(procStat(pid)![2]).toBe(String(run.pid));
    const none = startShim(SHIM, { settings: { command: { argv: ["true"] }, commandPid: false } });
    expect(await codeOf(none)).toBe(0);
    expect(none.has("command-pid")).toBe(false);
  });

  it("gives the command /dev/null, io/stdout and io/stderr, and no fd 3 nor any of its own", async () => {
    const run = startShim(SHIM, { settings: { command: { argv: ["sh", "-c", 'ls /proc/$$/fd; for f in 0 1 2; do readlink /proc/$$/fd/$f; done; true'] } } });
    expect(await codeOf(run)).toBe(0);
    expect(run.read("stdout")).toBe(`0\n1\n2\n/dev/null\n${join(run.io, "stdout")}\n${join(run.io, "stderr")}\n`);
  });

  it("shows `outlive-shim ID` in ps and top, however it was started (by its name, or by its path as systemd-run does), and leads its session and group", async () => {
    for (const argv0 of ["outlive-shim", undefined]) {
      const run = startShim(SHIM, { settings: { command: { argv: ["sleep", "60"] } }, argv0 });
      await waitFor("io/command-pid", () => run.read("command-pid") !== "");
      // Started by its path, it execs itself once more under its name: the same pid, before it reads its settings.
      expect(readFileSync(`/proc/${run.pid}/cmdline`, "latin1")).toBe(`outlive-shim\0${run.id}\0`);
      expect(readFileSync(`/proc/${run.pid}/comm`, "latin1")).toBe("outlive-shim\n");
      const stat = procStat(run.pid)!;
      // pgrp and session are the shim's own pid: the supervisor kills -pgid.
      expect([stat[2], stat[3]]).toEqual([String(run.pid), String(run.pid)]);
      const command = Number(run.read("command-pid"));
      expect(procStat(command)![2]).toBe(String(run.pid));
      // One process besides the command: the shim's only child is the command.
      expect(readFileSync(`/proc/${run.pid}/task/${run.pid}/children`, "utf8").trim()).toBe(String(command));
      expect(readlinkSync(`/proc/${run.pid}/fd/0`)).toBe("/dev/null");
    }
  });
});
