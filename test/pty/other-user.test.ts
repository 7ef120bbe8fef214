import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { Supervisor } from "../../lib/mod.ts";
import { waitUntil } from "../../lib/kill/process-group.ts";
import { ptyPaths, readPtyInfo } from "../../lib/pty/mod.ts";

const isRoot = process.getuid?.() === 0;
const hasTools = spawnSync("sh", ["-c", "command -v useradd && command -v userdel && command -v setpriv"]).status === 0;
const why = !isRoot ? "needs root to create a throwaway user" : !hasTools ? "needs useradd, userdel and setpriv" : "";
if (why) console.log(`skipped: another user cannot reach a PTY task's terminal: ${why}`);

it.skipIf(why !== "")("another user can neither write to a PTY task's terminal, resize it, nor read its output", async () => {
  const user = `olpty${process.pid % 100000}`;
  expect(spawnSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user]).status).toBe(0);
  const root = mkdtempSync(join(tmpdir(), "outlive-pty-user-"));
  // Everything above the task's own directory is open: only the task's 0700 directory and 0600 files keep the other user out.
  chmodSync(root, 0o755);
  const sup = await Supervisor.open({ storage: root, log: () => {} });
  try {
    await sup.run({ id: "mine", argv: ["bash", "--norc", "--noprofile", "-i"], pty: {} });
    const io = join(root, "tasks", "mine", "io");
    const info = readPtyInfo(ptyPaths(join(root, "tasks", "mine")))!;
    const id = spawnSync("id", ["-u", user], { encoding: "utf8" }).stdout.trim();
    const as = (cmd: string) =>
      spawnSync("setpriv", [`--reuid=${id}`, `--regid=${id}`, "--clear-groups", "sh", "-c", cmd], { encoding: "utf8", timeout: 5000 });
    chmodSync(join(root, "tasks"), 0o755);
    for (const [what, cmd] of [
      ["write the FIFO", `printf 'echo intruder\\n' > ${root}/tasks/mine/pty/in`],
      ["write the pts", `printf 'echo intruder\\n' > ${info.tty}`],
      ["resize the pts", `stty -F ${info.tty} cols 10 rows 10`],
      ["read the output", `cat ${io}/stdout`],
    ] as const) {
      const r = as(cmd);
      expect(r.status, `${what} as ${user}: ${r.stdout}${r.stderr}`).not.toBe(0);
      expect(r.stderr, what).toMatch(/Permission denied/);
    }
    await sup.write("mine", "stty size; echo owner-ok\n");
    expect(await waitUntil(() => /24 80\r\n.*owner-ok/s.test(readFileSync(join(io, "stdout"), "utf8")), 5000, 10)).toBe(true);
    expect(readFileSync(join(io, "stdout"), "utf8")).not.toMatch(/intruder/);
    await sup.kill("mine");
  } finally {
    await sup.close();
    rmSync(root, { recursive: true, force: true });
    spawnSync("userdel", [user]);
  }
});
