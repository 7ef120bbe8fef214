import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { Supervisor } from "../../lib/mod.ts";
import { waitUntil } from "../../lib/kill/process-group.ts";
import { ptyPaths, readPtyInfo } from "../../lib/pty/mod.ts";
import { readProcStat } from "../../lib/proc/stat.ts";
import { defaultProgram } from "../support/task-program.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function storage(): string {
  const d = mkdtempSync(join(tmpdir(), "outlive-pty-"));
  dirs.push(d);
  return d;
}
const stdoutOf = (root: string, id: string) => readFileSync(join(root, "tasks", id, "io", "stdout"), "utf8");
async function output(root: string, id: string, pattern: RegExp, ms = 10000): Promise<string> {
  const ok = await waitUntil(() => pattern.test(stdoutOf(root, id)), ms, 10);
  if (!ok) throw new Error(`no ${pattern} in the output of ${id}: ${JSON.stringify(stdoutOf(root, id))}`);
  return stdoutOf(root, id);
}

it("runs a command on a real terminal of the asked size and records its exit code", async () => {
  const root = storage();
  const sup = await Supervisor.open({ storage: root, log: () => {} });
  try {
    const t = await sup.run({ id: "p", argv: ["bash", "--norc", "--noprofile", "-c", "[ -t 0 ] && [ -t 1 ] && echo ISATTY; stty size; exit 7"], pty: { cols: 101, rows: 33 } });
    const done = await sup.wait(t.id);
    expect(done.exitCode).toBe(7);
    expect(done.state).toBe("exited");
    expect(done.pty).toEqual({ cols: 101, rows: 33 });
    expect(stdoutOf(root, "p")).toMatch(/ISATTY\r\n33 101\r\n/);
  } finally {
    await sup.close();
  }
});

it("takes input and resizes from the next incarnation; kill hangs the terminal up, the EXIT trap runs, no holder is left", async () => {
  const root = storage();
  const trapFile = join(root, "trap-ran");
  let sup = await Supervisor.open({ storage: root, log: () => {} });
  const t = await sup.run({ id: "sh", argv: ["bash", "--norc", "--noprofile", "-i"], pty: { cols: 80, rows: 24 } });
  await sup.write(t.id, `trap 'echo bye > ${trapFile}' EXIT\necho $((6*7))x\n`);
  await output(root, "sh", /42x/);
  await sup.close(); // the task and its terminal run on without a supervisor

  sup = await Supervisor.open({ storage: root, log: () => {} });
  try {
    expect(sup.get("sh").state).toBe("running");
    await sup.write("sh", "echo again-$((1+1))\n");
    await output(root, "sh", /again-2/);
    await sup.resize("sh", 132, 50);
    await sup.write("sh", "stty size\n");
    await output(root, "sh", /50 132\r\n/);
    const info = readPtyInfo(ptyPaths(join(root, "tasks", "sh")))!;
    const holder = readProcStat(info.pid)!.ppid; // the master's holder: outlive-shim, or the wrapper's `script`
    expect(readFileSync(`/proc/${holder}/cmdline`, "utf8").split("\0")[0]).toBe(defaultProgram() === "shim" ? "outlive-shim" : "script");
    const killed = await sup.kill("sh");
    expect(killed.how).toBe("term");
    expect(killed.record.exitCode).toBe(129); // SIGHUP, as when a terminal closes
    expect(readFileSync(trapFile, "utf8")).toBe("bye\n");
    expect(await waitUntil(() => readProcStat(holder) === null || readProcStat(holder)!.state === "Z", 2000, 10)).toBe(true);
  } finally {
    await sup.close();
  }
});

it("a command that ignores the hang-up still ends by the ladder's KILL, and its holder with it", async () => {
  const root = storage();
  const sup = await Supervisor.open({ storage: root, graceMs: 300, log: () => {} });
  try {
    await sup.run({ id: "stubborn", shell: "trap '' HUP TERM; echo ready; while :; do sleep 0.05; done", pty: {} });
    await output(root, "stubborn", /ready/);
    const info = readPtyInfo(ptyPaths(join(root, "tasks", "stubborn")))!;
    const holder = readProcStat(info.pid)!.ppid;
    const killed = await sup.kill("stubborn");
    expect(killed.how).toBe("kill");
    const gone = (pid: number) => readProcStat(pid) === null || readProcStat(pid)!.state === "Z";
    expect(await waitUntil(() => gone(holder), 2000, 10)).toBe(true);
    // The process-group placement cannot end what left the group; the closed master's hang-up was ignored,
    // so the command itself is still there: ended here by pid, as a cgroup placement's kill-all would.
    if (!gone(info.pid)) process.kill(-info.pid, "SIGKILL");
  } finally {
    await sup.close();
  }
});

it("refuses bad input with one clear error and leaves the task untouched", async () => {
  const root = storage();
  const sup = await Supervisor.open({ storage: root, log: () => {} });
  try {
    await sup.run({ id: "plain", argv: ["sleep", "30"] });
    await expect(sup.write("plain", "x")).rejects.toMatchObject({ code: "E_NOT_PTY" });
    await expect(sup.resize("plain", 80, 24)).rejects.toMatchObject({ code: "E_NOT_PTY" });
    const p = await sup.run({ id: "term", argv: ["cat"], pty: {} });
    await expect(sup.resize("term", 0, 24)).rejects.toMatchObject({ code: "E_BAD_OPTION", message: expect.stringMatching(/size\.cols.*`0`/) });
    await expect(sup.resize("term", 100000, 24)).rejects.toMatchObject({ code: "E_BAD_OPTION" });
    await expect(sup.run({ argv: ["cat"], pty: { cols: -1 } })).rejects.toMatchObject({ code: "E_BAD_OPTION" });
    expect(sup.get("term").state).toBe("running");
    await sup.write("term", "still-here\n");
    await output(root, "term", /still-here\r\nstill-here/); // the echo, then cat's copy
    await sup.write("term", "\x04"); // Ctrl-D: end of input for cat
    expect((await sup.wait(p.id)).exitCode).toBe(0);
    await expect(sup.write("term", "x")).rejects.toMatchObject({ code: "E_PTY_CLOSED", message: expect.stringMatching(/has ended \(exited, code 0\)/) });
    expect(existsSync(join(root, "tasks", "term", "pty", "in"))).toBe(true);
    await sup.kill("plain");
  } finally {
    await sup.close();
  }
});
