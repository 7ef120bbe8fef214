// Host faults under Deno: the same library from the TypeScript sources, on real processes and a real tmpfs.
// Run: node_modules/.bin/deno test -A test/deno/host-faults.test.ts
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isRunning, Supervisor } from "../../lib/internal.ts";
import { exitCodeWritten, waitFor } from "../support/wait.ts";

const notRoot = process.getuid?.() === 0 ? null : "mounting a tmpfs needs root";
if (notRoot) console.log(`host-faults: the full-disk test is skipped: ${notRoot}`);

const record = (storage: string, id: string) => JSON.parse(readFileSync(join(storage, "tasks", id, "record.json"), "utf8"));

Deno.test("readOnly: replay decides in memory, says what it could not store, and changes nothing", async () => {
  const storage = mkdtempSync(join(tmpdir(), "outlive-deno-ro-"));
  try {
    const sup = await Supervisor.open({ storage, log: () => {} });
    const id = (await sup.run({ shell: "sleep 0.3; exit 6" })).id;
    await sup.close();
    await waitFor("the exit code", () => exitCodeWritten(storage, id));
    const view = await Supervisor.open({ storage, readOnly: true, log: () => {} });
    try {
      assert.equal(view.get(id).state, "exited");
      assert.equal(view.get(id).exitCode, 6);
      assert.deepEqual(view.replayReport.unstored.map((u) => [u.id, u.state]), [[id, "exited"]]);
      await assert.rejects(view.run({ argv: ["true"] }), { code: "E_READ_ONLY" });
      assert.equal(existsSync(join(storage, "supervisor.lock")), false);
    } finally {
      await view.close();
    }
    assert.equal(record(storage, id).state, "running");
  } finally {
    rmSync(storage, { recursive: true, force: true });
  }
});

Deno.test("a user's kill -9 of the group is a signal outlive did not send, not the supervisor's cgroup", async () => {
  const storage = mkdtempSync(join(tmpdir(), "outlive-deno-kill9-"));
  try {
    let sup = await Supervisor.open({ storage, log: () => {} });
    const task = await sup.run({ argv: ["sleep", "60"] });
    await sup.close();
    process.kill(-task.pid!, "SIGKILL");
    await waitFor("the task to be gone", () => !isRunning(task.pid!));
    sup = await Supervisor.open({ storage, log: () => {} });
    try {
      const done = sup.get(task.id);
      assert.equal(done.state, "lost");
      assert.match(done.reason!, /killed by a signal outlive did not send, such as SIGKILL/);
      assert.doesNotMatch(done.reason!, /killed with the supervisor's cgroup/);
    } finally {
      await sup.close();
    }
  } finally {
    rmSync(storage, { recursive: true, force: true });
  }
});

Deno.test("a shell task runs in bash by default, and its plain EXIT trap runs on the kill ladder", async () => {
  const storage = mkdtempSync(join(tmpdir(), "outlive-deno-shell-"));
  const sup = await Supervisor.open({ storage, log: () => {}, graceMs: 2000 });
  try {
    assert.match(sup.options.shellPath, /\/bash$/);
    const trap = join(storage, "trap");
    const t = await sup.run({ shell: `trap 'echo ran > ${trap}' EXIT; sleep 64` });
    await waitFor("`sleep 64`", () => spawnSync("pgrep", ["-g", String(t.pid), "-x", "sleep"]).status === 0);
    const { record: done } = await sup.kill(t.id);
    assert.equal(done.state, "killed");
    assert.equal(readFileSync(trap, "utf8"), "ran\n");
  } finally {
    await sup.close();
    rmSync(storage, { recursive: true, force: true });
  }
});

Deno.test({
  name: "a task that fills its tmpfs storage ends exited with its real code",
  ignore: notRoot !== null,
  async fn() {
    const mnt = mkdtempSync(join(tmpdir(), "outlive-deno-full-"));
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", mnt]);
    try {
      const sup = await Supervisor.open({ storage: join(mnt, "s"), log: () => {} });
      try {
        const t = await sup.run({ shell: "head -c 4000000 /dev/zero; exit 7" });
        const done = await sup.wait(t.id);
        assert.equal(done.state, "exited");
        assert.equal(done.exitCode, 7);
        assert.match(done.reason!, /its output is cut off where the disk filled/);
        await sup.store.flush();
        assert.equal(record(join(mnt, "s"), t.id).exitCode, 7);
      } finally {
        await sup.close();
      }
    } finally {
      execFileSync("umount", [mnt]);
      rmSync(mnt, { recursive: true, force: true });
    }
  },
});
