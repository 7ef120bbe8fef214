import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { waitUntil } from "../../lib/kill/process-group.ts";

// Each step is its own CLI process, as a user would type them; attach runs on a real terminal (a tmux pane).
const CLI = join(__dirname, "..", "..", "dist", "scripts", "outlive.js");
const storage = mkdtempSync(join(tmpdir(), "outlive-pty-cli-"));
const sock = join(storage, "tmux.sock");
const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
if (!hasTmux) console.log("skipped: outlive attach through a real terminal: tmux is not installed");

afterAll(() => {
  outlive("stop-all");
  if (hasTmux) tmux("kill-server");
  rmSync(storage, { recursive: true, force: true });
});

function outlive(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, args[0], "--storage", storage, ...args.slice(1)], { encoding: "utf8", timeout: 30_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}
function tmux(...args: string[]) {
  return spawnSync("tmux", ["-S", sock, ...args], { encoding: "utf8", env: { ...process.env, TMUX: "" } });
}
const screen = (target: string) => tmux("capture-pane", "-p", "-t", target).stdout;
async function onScreen(target: string, pattern: RegExp): Promise<void> {
  if (!(await waitUntil(() => pattern.test(screen(target)), 10_000, 50))) throw new Error(`no ${pattern} on screen:\n${screen(target)}`);
}
const logs = (id: string) => outlive("logs", id).out;
/**
 * `stty size` in the attached terminal until it shows ROWS COLS: attach applies the user's size
 * with stty on the pts a moment after it starts or sees SIGWINCH, and a loaded machine may run
 * the keys first. Fails with the screen if the size never arrives.
 */
async function sizeShows(target: string, rows: number, cols: number): Promise<void> {
  const want = new RegExp(`^${rows} ${cols}$`, "m");
  const ok = await waitUntil(() => {
    if (want.test(screen(target))) return true;
    tmux("send-keys", "-t", target, "clear; stty size", "Enter");
    return false;
  }, 10_000, 500);
  if (!ok) throw new Error(`the terminal never showed ${rows} ${cols}:\n${screen(target)}`);
}

it("a PTY task started by one CLI call takes input from the next, also after replay", async () => {
  expect(outlive("run", "--pty", "--cols", "90", "--rows", "20", "--id", "cli", "--", "bash", "--norc", "--noprofile", "-i").code).toBe(0);
  expect(outlive("send", "cli", "echo one-$((1+1))\\n").code).toBe(0);
  expect(await waitUntil(() => /one-2/.test(logs("cli")), 5000, 20)).toBe(true);
  expect(outlive("replay").code).toBe(0);
  expect(outlive("resize", "cli", "77", "11").code).toBe(0);
  expect(outlive("send", "cli", "stty size\\r").code).toBe(0);
  expect(await waitUntil(() => /11 77\r\n/.test(logs("cli")), 5000, 20)).toBe(true);
  const bad = outlive("resize", "cli", "100000", "11");
  expect(bad.code).toBe(2);
  expect(bad.err.trim().split("\n")).toHaveLength(1);
  expect(outlive("send", "cli", "exit 4\\n").code).toBe(0);
  expect(JSON.parse(outlive("wait", "cli", "--json").out)).toMatchObject({ state: "exited", exitCode: 4 });
  const late = outlive("send", "cli", "x");
  expect(late.code).toBe(1);
  expect(late.err).toMatch(/has ended \(exited, code 4\)/);
});

it.skipIf(!hasTmux)("attach: raw keys in, output out, follows the terminal's size, detaches on Ctrl-], re-attaches, exits with the task's code", async () => {
  expect(outlive("run", "--pty", "--id", "att", "--", "bash", "--norc", "--noprofile", "-i").code).toBe(0);
  const attach = `${process.execPath} ${CLI} attach att --storage ${storage}; echo ATTACH_RC=$?; sleep 60`;
  expect(tmux("new-session", "-d", "-s", "one", "-x", "100", "-y", "30", attach).status).toBe(0);
  await sizeShows("one", 30, 100);
  tmux("resize-window", "-t", "one", "-x", "120", "-y", "40");
  await sizeShows("one", 40, 120);
  tmux("send-keys", "-t", "one", "C-]");
  await onScreen("one", /detached from att; it runs on[\s\S]*ATTACH_RC=0/);
  expect(JSON.parse(outlive("wait", "att", "--timeout", "0", "--json").out).state).toBe("running");

  expect(tmux("new-session", "-d", "-s", "two", "-x", "80", "-y", "24", attach).status).toBe(0);
  // Keys typed before attach has put the pane in raw mode are echoed by the pane itself, and
  // a fixed 300 ms was not always enough under load: the size coming back says attach is live.
  await sizeShows("two", 24, 80);
  tmux("send-keys", "-t", "two", "echo again-$((40+2))", "Enter");
  await onScreen("two", /^again-42$/m);
  tmux("send-keys", "-t", "two", "exit 5", "Enter");
  await onScreen("two", /exited with code 5[\s\S]*ATTACH_RC=5/);
  // The exit marker is the code over its reserved placeholder bytes ("5  \n").
  expect(readFileSync(join(storage, "tasks", "att", "io", "exit"), "utf8").trim()).toBe("5");

  const noTty = outlive("attach", "att");
  expect(noTty.code).toBe(2);
  expect(noTty.err).toMatch(/attach needs a terminal: stdin is not one/);
});
