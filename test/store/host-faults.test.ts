/**
 * Real faults on a real storage: a tmpfs with `size=` filled by a task's own
 * output and by `dd`, and `mount -o remount,ro`. Needs root (to mount).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isRunning, Supervisor } from "../../lib/internal.ts";
import { runToEnd } from "../support/run-to-end.ts";
import { exitCodeWritten, waitFor } from "../support/wait.ts";

const CLI = join(__dirname, "..", "..", "dist", "scripts", "outlive.js");
const notRoot = process.getuid?.() === 0 ? null : "mounting a tmpfs needs root";
if (notRoot) console.log(`host-faults: skipped: ${notRoot}`);

const mounts: string[] = [];
const pids: number[] = [];
afterAll(async () => {
  for (const pid of pids) if (isRunning(pid)) process.kill(-pid, "SIGKILL");
  for (const dir of mounts) {
    spawnSync("umount", [dir]);
    // Only once unmounted: never remove what is still on the tmpfs through a bind.
    if (!execFileSync("findmnt", ["-rno", "TARGET"], { encoding: "utf8" }).split("\n").includes(dir)) rmSync(dir, { recursive: true, force: true });
  }
});

/** A fresh tmpfs of `size` with an empty storage directory in it. */
function tmpfs(size: string): string {
  const dir = mkdtempSync(join(tmpdir(), "outlive-fault-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", dir]);
  mounts.push(dir);
  return dir;
}

/** Awaited, within 60 s: one test runs the CLI some fifteen times (see test/support/run-to-end.ts). */
async function outlive(storage: string, ...args: string[]) {
  const r = await runToEnd(process.execPath, [CLI, args[0], "--storage", storage, ...args.slice(1)], { timeoutMs: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** Fills what is left of the file system with `dd`, leaving `leaveKb` free. */
function fill(dir: string, name: string, leaveKb = 0): string {
  const path = join(dir, name);
  const freeKb = Number(execFileSync("df", ["--output=avail", "-k", dir], { encoding: "utf8" }).trim().split("\n")[1]);
  spawnSync("dd", ["if=/dev/zero", `of=${path}`, "bs=1k", `count=${Math.max(0, freeKb - leaveKb)}`], { stdio: "ignore" });
  if (leaveKb === 0) spawnSync("dd", ["if=/dev/zero", `of=${path}`, "bs=4k", "oflag=append", "conv=notrunc"], { stdio: "ignore" });
  return path;
}

/** Every file under `dir`, relative, with its size. */
function listing(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(`${p.slice(dir.length)} ${statSync(p).size}`);
    }
  };
  walk(dir);
  return out.sort();
}

const temps = (dir: string) => listing(dir).filter((l) => /\.tmp /.test(l) || /\.supervisor\.lock\./.test(l));

/** `run` and `kill` fail in one line naming the storage and the errno, exit 1, and change nothing; the sleeper runs on. */
async function expectWritesRefused(via: string, errno: string, storage: string, before: string[]): Promise<void> {
  for (const args of [["run", "--", "true"], ["kill", "sleeper"]]) {
    const r = await outlive(via, ...args);
    expect(r.code).toBe(1);
    expect(r.err.trim().split("\n"), r.err).toHaveLength(1);
    expect(r.err).toContain(via);
    expect(r.err).toContain(errno);
  }
  expect(listing(storage)).toEqual(before);
  expect(isRunning(taskRecord(storage, "sleeper").pid)).toBe(true);
}

function taskRecord(storage: string, id: string) {
  return JSON.parse(readFileSync(join(storage, "tasks", id, "record.json"), "utf8"));
}

describe.skipIf(notRoot)("a full storage", () => {
  it("a task whose own output fills the disk ends exited with its real code, and the reason says its output is cut off", async () => {
    const mnt = tmpfs("2m");
    const storage = join(mnt, "s");
    const sup = await Supervisor.open({ storage, log: () => {} });
    const filler = fill(mnt, "filler", 400);
    try {
      const task = await sup.run({ shell: "head -c 4000000 /dev/zero; exit 7" });
      const done = await sup.wait(task.id);
      expect(done).toMatchObject({ state: "exited", exitCode: 7 });
      expect(done.reason).toContain("exited with code 7; its output is cut off where the disk filled");
      // wait answers from memory as the end is decided; the write lands a moment later.
      await sup.store.flush();
      expect(taskRecord(storage, task.id)).toMatchObject({ state: "exited", exitCode: 7, reason: done.reason });
      expect(readdirSync(join(storage, "tasks", task.id)).filter((n) => n.startsWith(".record.reserve"))).toEqual([]);
      expect(temps(mnt)).toEqual([]);
      // A write command on the full disk fails naming the storage and the errno, and leaves nothing.
      const before = listing(storage);
      await expect(sup.run({ argv: ["true"] })).rejects.toThrow(new RegExp(`${storage}.*ENOSPC`));
      expect(listing(storage)).toEqual(before);
      // After space is freed, everything goes on.
      rmSync(filler);
      const next = await sup.run({ argv: ["sh", "-c", "exit 4"] });
      expect(await sup.wait(next.id)).toMatchObject({ state: "exited", exitCode: 4, reason: "exited with code 4" });
    } finally {
      await sup.close();
    }
  });

  it("the CLI: ps shows the truth on a full disk without writing, run and kill fail in one line, and after space is freed it is stored", async () => {
    const mnt = tmpfs("2m");
    const storage = join(mnt, "s");
    expect((await outlive(storage, "run", "--id", "sleeper", "--", "sleep", "60")).code).toBe(0);
    pids.push(taskRecord(storage, "sleeper").pid);
    const filler = fill(mnt, "filler", 400);
    // The filler starts writing only once its run has returned: had it ended while that command still held the
    // storage, the command would have stored its end, and nothing would be left for ps to decide unstored.
    const go = join(mkdtempSync(join(tmpdir(), "outlive-fault-go-")), "go");
    expect((await outlive(storage, "run", "--id", "filler", "--shell", `while [ ! -e ${go} ]; do sleep 0.02; done; head -c 4000000 /dev/zero; exit 5`)).code).toBe(0);
    writeFileSync(go, "");
    await waitFor("the filler's exit code", () => exitCodeWritten(storage, "filler"));
    rmSync(join(go, ".."), { recursive: true, force: true });
    // The task stopped writing where its own write failed; a page or two may still be free (tmpfs counts
    // pages). Take those too, so every command below meets a disk that is full to the last block.
    const rest = fill(mnt, "rest");
    const before = listing(storage);
    const refused = await outlive(storage, "run", "--id", "late", "--", "true");
    expect(refused.code, refused.err).toBe(1);
    expect(listing(storage)).toEqual(before);

    const ps = await outlive(storage, "ps", "--json");
    expect(ps.code).toBe(0);
    const view = JSON.parse(ps.out);
    expect(view.notWritable).toMatch(/^ENOSPC/);
    expect(view.tasks.find((t: { id: string }) => t.id === "filler")).toMatchObject({ state: "exited", exitCode: 5 });
    expect(view.tasks.find((t: { id: string }) => t.id === "sleeper")).toMatchObject({ state: "running" });
    expect(view.unstored.map((u: { id: string }) => u.id)).toEqual(["filler"]);
    // --tail counts lines; the filler wrote only NULs, so its last line is all that the disk kept.
    const logs = await outlive(storage, "logs", "filler", "--tail", "1");
    expect(logs.code).toBe(0);
    expect(logs.out).toMatch(/^\0+$/);
    const waited = await outlive(storage, "wait", "filler", "--json");
    // wait exits with the task's own code.
    expect(waited.code).toBe(5);
    expect(JSON.parse(waited.out)).toMatchObject({ state: "exited", exitCode: 5 });
    expect(listing(storage)).toEqual(before);
    expect(taskRecord(storage, "filler").state).toBe("running");

    await expectWritesRefused(storage, "ENOSPC", storage, before);

    rmSync(filler);
    rmSync(rest);
    const stored = JSON.parse((await outlive(storage, "ps", "--json")).out);
    expect(stored).toMatchObject({ notWritable: null, unstored: [] });
    expect(taskRecord(storage, "filler")).toMatchObject({ state: "exited", exitCode: 5 });
    expect(JSON.parse((await outlive(storage, "kill", "sleeper", "--json")).out)).toMatchObject({ task: { state: "killed" } });
    expect(temps(mnt)).toEqual([]);
  });

  it("the watchdog's deadline on a full disk: timed_out, with the code of its TERM", async () => {
    const mnt = tmpfs("2m");
    const storage = join(mnt, "s");
    const sup = await Supervisor.open({ storage, log: () => {} });
    let id: string;
    try {
      id = (await sup.run({ shell: "head -c 4000000 /dev/zero; sleep 30", timeoutSeconds: 1 })).id;
      pids.push(sup.get(id).pid!);
    } finally {
      // No supervisor at the deadline: the wrapper's watchdog alone ends it.
      await sup.close();
    }
    fill(mnt, "filler");
    await waitFor("the watchdog's end", () => exitCodeWritten(storage, id));
    const view = await Supervisor.open({ storage, readOnly: true, log: () => {} });
    try {
      expect(view.get(id)).toMatchObject({ state: "timed_out", exitCode: 143 });
      expect(view.replayReport.unstored).toEqual([expect.objectContaining({ id, state: "timed_out" })]);
    } finally {
      await view.close();
    }
  });
});

describe.skipIf(notRoot)("a read-only storage", () => {
  it("ps, logs, wait and probe work; run and kill fail in one line with EROFS; nothing changes; writable again, it is stored", async () => {
    const mnt = tmpfs("8m");
    const storage = join(mnt, "s");
    expect((await outlive(storage, "run", "--id", "sleeper", "--", "sleep", "60")).code).toBe(0);
    pids.push(taskRecord(storage, "sleeper").pid);
    // It ends after its CLI has gone: no one has stored its end.
    expect((await outlive(storage, "run", "--id", "done", "--shell", "echo hi; sleep 0.5; exit 3")).code).toBe(0);
    await waitFor("done's exit code", () => exitCodeWritten(storage, "done"));
    // The storage as a read-only mount: a bind of it remounted ro (a plain remount,ro is refused while the
    // sleeper holds its output open for writing; the bind is read-only all the same).
    const ro = mkdtempSync(join(tmpdir(), "outlive-fault-ro-"));
    execFileSync("mount", ["--bind", mnt, ro]);
    mounts.unshift(ro);
    execFileSync("mount", ["-o", "remount,ro,bind", ro]);
    const roStorage = join(ro, "s");
    const before = listing(storage);
    const view = JSON.parse((await outlive(roStorage, "ps", "--json")).out);
    expect(view.notWritable).toMatch(/^EROFS/);
    expect(view.tasks.find((t: { id: string }) => t.id === "done")).toMatchObject({ state: "exited", exitCode: 3 });
    expect(view.tasks.find((t: { id: string }) => t.id === "sleeper")).toMatchObject({ state: "running" });
    expect(view.unstored).toEqual([expect.objectContaining({ id: "done", state: "exited" })]);
    expect((await outlive(roStorage, "ps")).out).toContain("cannot be written, EROFS");
    expect((await outlive(roStorage, "logs", "done")).out).toBe("hi\n");
    expect(JSON.parse((await outlive(roStorage, "wait", "done", "--json")).out)).toMatchObject({ state: "exited", exitCode: 3 });
    for (const args of [["probe", "--json"], ["census", String(process.pid), "--json"]]) {
      expect(spawnSync(process.execPath, [CLI, ...args], { env: { ...process.env, OUTLIVE_STORAGE: roStorage } }).status).toBe(0);
    }
    await expectWritesRefused(roStorage, "EROFS", storage, before);
    execFileSync("umount", [ro]);
    mounts.shift();
    rmSync(ro, { recursive: true });
    expect(JSON.parse((await outlive(storage, "ps", "--json")).out)).toMatchObject({ notWritable: null, unstored: [] });
    expect(taskRecord(storage, "done")).toMatchObject({ state: "exited", exitCode: 3 });
    expect(JSON.parse((await outlive(storage, "kill", "sleeper", "--json")).out)).toMatchObject({ task: { state: "killed" } });
    expect(existsSync(join(storage, "supervisor.lock"))).toBe(false);
  });
});
