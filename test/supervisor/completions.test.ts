import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { Supervisor, type TaskRecord } from "../../lib/mod.ts";

/** Takes what the queue holds now (waits briefly for more, then stops). */
async function drainQueue(sup: Supervisor, waitMs = 300): Promise<TaskRecord[]> {
  const got: TaskRecord[] = [];
  const it = sup.completions()[Symbol.asyncIterator]();
  for (;;) {
    const next = await Promise.race([it.next(), new Promise<null>((r) => setTimeout(() => r(null), waitMs))]);
    if (!next || next.done) return got;
    got.push(next.value);
  }
}

it("delivers each completion once per life until acknowledged; an ack survives restarts", async () => {
  const storage = mkdtempSync(join(tmpdir(), "outlive-completions-"));
  const open = () => Supervisor.open({ storage, log: () => {} });
  try {
    let sup = await open();
    const a = await sup.run({ id: "a", argv: ["true"] });
    const b = await sup.run({ id: "b", argv: ["false"] });
    await Promise.all([sup.wait(a.id), sup.wait(b.id)]);
    expect((await drainQueue(sup)).map((r) => r.id).sort()).toEqual(["a", "b"]);
    expect(await drainQueue(sup)).toEqual([]); // nothing twice in one life
    await sup.ack("a");
    await sup.close();

    sup = await open(); // replay re-queues only what was not acknowledged
    expect((await drainQueue(sup)).map((r) => r.id)).toEqual(["b"]);
    await sup.close();

    sup = await open(); // and again, since b is still not acknowledged — but never a
    const third = await drainQueue(sup);
    expect(third.map((r) => r.id)).toEqual(["b"]);
    expect(third[0].exitCode).toBe(1);
    await sup.ack("b");
    await expect(sup.ack("nope")).rejects.toMatchObject({ code: "E_NO_TASK" });
    await expect(sup.ack("../x")).rejects.toMatchObject({ code: "E_BAD_ID" });
    await sup.close();

    sup = await open();
    expect(await drainQueue(sup)).toEqual([]);
    expect(sup.get("a").acknowledgedAt).not.toBeNull();
    await sup.close();
  } finally {
    rmSync(storage, { recursive: true, force: true });
  }
});
