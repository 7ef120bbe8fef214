// Retention and the control channel under Deno: the same library, run from the TypeScript sources,
// on real processes. Run: node_modules/.bin/deno test -A test/deno/retention.test.ts
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { askHolder, controlSocketPath, holderAnswers, NO_HOLDER, Supervisor, type TaskRecord } from "../../lib/internal.ts";

Deno.test("retention: remove refuses a live task, prune takes acknowledged ones oldest first, open prunes by the rule", async () => {
  const storage = mkdtempSync(join(tmpdir(), "outlive-deno-retention-"));
  try {
    const sup = await Supervisor.open({ storage, log: () => {}, retention: false, control: false });
    const done: string[] = [];
    for (let i = 0; i < 3; i++) {
      const t = await sup.run({ shell: `echo ${i}` });
      await sup.wait(t.id);
      await sup.ack(t.id);
      done.push(t.id);
    }
    const live = await sup.run({ argv: ["sleep", "30"] });
    await assert.rejects(sup.remove([done[0], live.id]), { code: "E_TASK_LIVE" });
    assert.ok(existsSync(join(storage, "tasks", done[0])));
    assert.deepEqual((await sup.prune({ keep: 2 })).removed, [done[0]]);
    await sup.kill(live.id, { graceMs: 500 });
    await sup.close();
    const again = await Supervisor.open({ storage, log: () => {}, retention: { keep: 1 }, control: false });
    assert.deepEqual(again.retainedAtOpen.removed, [done[1]]);
    assert.deepEqual(again.list().map((r) => r.id).sort(), [done[2], live.id].sort());
    assert.deepEqual(readdirSync(join(storage, "incarnations")).length, 2);
    await again.close();
  } finally {
    rmSync(storage, { recursive: true, force: true });
  }
});

Deno.test("control channel (the wire protocol): a client runs, waits for and kills a task through the holder", async () => {
  const storage = mkdtempSync(join(tmpdir(), "outlive-deno-ctl-"));
  try {
    assert.equal(await askHolder(storage, "list", {}), NO_HOLDER);
    const sup = await Supervisor.open({ storage, log: () => {} });
    assert.equal(statSync(controlSocketPath(storage)).mode & 0o777, 0o600);
    const quick = await askHolder(storage, "run", { shell: "exit 6" }) as TaskRecord;
    assert.equal((await askHolder(storage, "wait", { id: quick.id }) as TaskRecord).exitCode, 6);
    const slow = await askHolder(storage, "run", { argv: ["sleep", "30"] }) as TaskRecord;
    const killed = await askHolder(storage, "kill", { id: slow.id, graceMs: 300 }) as { how: string; record: TaskRecord };
    assert.equal(killed.record.state, "killed");
    await assert.rejects(askHolder(storage, "remove", { ids: ["t-nosuchtask"] }), { code: "E_NO_TASK" });
    assert.equal(await holderAnswers(storage), true);
    await sup.close();
    assert.equal(await holderAnswers(storage), false);
  } finally {
    rmSync(storage, { recursive: true, force: true });
  }
});
