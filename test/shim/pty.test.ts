import { execFileSync } from "node:child_process";
import { closeSync, constants, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ptyPaths } from "../../lib/pty/holder.ts";
import { controls, readPtyInfo, resizeTerminal, writeTerminal } from "../../lib/pty/terminal.ts";
import { cleanupShims, codeOf, ptyInfo, type ShimRun, shimUnderTest, startShim, waitForText } from "../support/shim-task.ts";
import { unfinishedGroupMembers } from "../support/group.ts";
import { waitFor } from "../support/wait.ts";

// A PTY task's terminal, held by the shim: pty/info, input through pty/in, resize, hang-up, exit code.
const shim = shimUnderTest();
if (!shim.path) console.log(`test/shim/pty.test.ts skipped: ${shim.reason}`);
const SHIM = shim.path!;

/** An environment without TERM (the shim gives the terminal's program one) and without the user's bash start-up files' say. */
function ptyEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME ?? "/root", PS1: "$ " };
  return env;
}

function startPty(argv: string[], size = { cols: 100, rows: 30 }): ShimRun {
  return startShim(SHIM, {
    settings: (dir) => ({ command: { argv }, commandPid: false, pty: { dir: join(dir, "pty"), ...size } }),
    env: ptyEnv(),
  });
}

/** Types into the task's terminal through pty/in, as lib/pty's writeTerminal does. */
function type(run: ShimRun, text: string): void {
  const fd = openSync(join(run.dir, "pty", "in"), constants.O_WRONLY | constants.O_NONBLOCK);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

describe.skipIf(!shim.path)("outlive-shim holds a PTY task's terminal", () => {
  afterEach(cleanupShims);

  it("gives an interactive bash a terminal: pty/info, input through pty/in echoed to io/stdout, stty size, TERM, a resize", async () => {
    const run = startPty(["bash", "--norc", "--noprofile", "-i"]);
    await waitFor("pty/info", () => ptyInfo(run) !== null);
    const info = ptyInfo(run)!;
    // The session leader is the command itself, on that terminal, which only its owner may open.
    const stat = readFileSync(`/proc/${info.pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    expect(fields[3]).toBe(String(info.pid));
    expect(Number(fields[4])).toBe(statSync(info.tty).rdev);
    expect(statSync(info.tty).mode & 0o777).toBe(0o600);
    expect(statSync(join(run.dir, "pty")).mode & 0o777).toBe(0o700);
    const fifo = statSync(join(run.dir, "pty", "in"));
    expect(fifo.isFIFO() && (fifo.mode & 0o777) === 0o600).toBe(true);

    type(run, "echo typed-$((6*7)); tty; stty size; echo \"term=$TERM\"\n");
    await waitForText(run, "stdout", "typed-42\r\n");
    // The line as typed is echoed by the terminal, then bash's answers.
    expect(run.read("stdout")).toContain("echo typed-$((6*7))");
    await waitForText(run, "stdout", "term=xterm-256color");
    expect(run.read("stdout")).toContain(`${info.tty}\r\n30 100\r\n`);

    // The supervisor's resize: stty -F on the pts, which the kernel follows with SIGWINCH.
    execFileSync("stty", ["-F", info.tty, "cols", "120", "rows", "40"]);
    type(run, "stty size\n");
    await waitForText(run, "stdout", "40 120\r\n");

    type(run, "exit 5\n");
    expect(await codeOf(run)).toBe(5);
    expect((await run.exited).code).toBe(5);
    expect(run.has("ended")).toBe(true);
    expect(run.has("command-pid")).toBe(false);
  });

  it("answers lib/pty as script did: readPtyInfo, controls, writeTerminal and resizeTerminal work on it unchanged", async () => {
    const run = startPty(["bash", "--norc", "--noprofile", "-i"]);
    await waitFor("pty/info", () => ptyInfo(run) !== null);
    const paths = ptyPaths(run.dir);
    const info = readPtyInfo(paths)!;
    expect(controls(info)).toBe(true);
    expect(await resizeTerminal(run.id, paths, { cols: 132, rows: 43 })).toEqual({ cols: 132, rows: 43 });
    await writeTerminal(run.id, paths, "stty size; exit 0\n");
    expect(await codeOf(run)).toBe(0);
    expect(run.read("stdout")).toContain("43 132\r\n");
  });

  it("hangs the terminal up on a TERM to the group: the shell gets SIGHUP and runs its EXIT trap (129)", async () => {
    const run = startPty(["bash", "--norc", "--noprofile", "-i"]);
    await waitFor("pty/info", () => ptyInfo(run) !== null);
    const trapped = join(run.dir, "trap-ran");
    // The terminal echoes the typed line: wait for what only running it prints (trap-2), not for the echo of its text.
    type(run, `trap 'echo ran > ${trapped}' EXIT; echo trap-$((1+1))\n`);
    await waitForText(run, "stdout", "trap-2\r\n");
    process.kill(-run.pid, "SIGTERM");
    expect(await codeOf(run)).toBe(129);
    expect(readFileSync(trapped, "utf8")).toBe("ran\n");
  });

  it("at the deadline hangs the terminal up, and after the grace KILLs the terminal's group as well as its own", async () => {
    const run = startShim(SHIM, {
      settings: (dir) => ({ command: { argv: ["sh", "-c", 'trap "" HUP TERM; echo ready; sleep 120; echo not-reached'] }, commandPid: false, pty: { dir: join(dir, "pty"), cols: 80, rows: 24 }, deadlineMs: 1000, graceMs: 1000 }),
      env: ptyEnv(),
    });
    await waitForText(run, "stdout", "ready");
    const info = ptyInfo(run)!;
    expect((await run.exited).signal).toBe("SIGKILL");
    expect(run.has("timed-out")).toBe(true);
    // A zombie handed to a PID 1 that reaps nothing (`.ci/loaded`, npm in a container) has ended too.
    await waitFor("the terminal's group to be gone", () => unfinishedGroupMembers(info.pid).length === 0);
  });

  it("copies what the command wrote just before it ended (the master is drained), and its exit code", async () => {
    const run = startPty(["sh", "-c", 'i=0; while [ $i -lt 2000 ]; do echo "line $i"; i=$((i+1)); done; echo last-words; exit 3']);
    expect(await codeOf(run)).toBe(3);
    const out = run.read("stdout");
    expect(out).toContain("line 1999\r\nlast-words\r\n");
    expect(out.split("\r\n").filter((l) => l.startsWith("line "))).toHaveLength(2000);
  });

  it("runs a restart policy's attempts on the same terminal, each its session leader, pty/info naming the last", async () => {
    const run = startShim(SHIM, {
      settings: (dir) => ({
        command: { argv: ["sh", "-c", 'echo "attempt $$ on $(tty)"; exit 1'] },
        commandPid: false,
        pty: { dir: join(dir, "pty"), cols: 80, rows: 24 },
        restart: { when: "on-failure", max: 2, delayMs: 20, delayMaxMs: 40 },
      }),
      env: ptyEnv(),
    });
    expect(await codeOf(run)).toBe(1);
    const lines = run.read("stdout").split("\r\n").filter(Boolean);
    expect(lines).toHaveLength(3);
    const ttys = new Set(lines.map((l) => l.split(" on ")[1]));
    expect(ttys.size).toBe(1);
    const last = lines[2].split(" ")[1];
    expect(ptyInfo(run)).toEqual({ pid: Number(last), tty: [...ttys][0] });
  });

  it("keeps input whole across writers that come and go: a writer closing is never the end of input", async () => {
    const run = startPty(["cat"]);
    await waitFor("pty/info", () => ptyInfo(run) !== null);
    type(run, "one\n");
    // Echoed by the terminal, then copied back by cat: two lines.
    await waitForText(run, "stdout", "one\r\none\r\n");
    type(run, "two\n");
    await waitForText(run, "stdout", "two\r\n");
    type(run, "\x04");
    expect(await codeOf(run)).toBe(0);
    expect(run.read("stdout")).toBe("one\r\none\r\ntwo\r\ntwo\r\n");
  });
});
