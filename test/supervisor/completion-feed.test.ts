import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { Supervisor, type TaskRecord } from "../../lib/mod.ts";
import { tempDir } from "../support/cli.ts";

const temp = tempDir("outlive-feed-");
afterAll(() => temp.remove());

/** What a subscription holds now (waits briefly for more, then stops). */
async function take(sub: AsyncIterable<TaskRecord>, count: number, waitMs = 300): Promise<string[]> {
  const it = sub[Symbol.asyncIterator]();
  const got: string[] = [];
  while (got.length < count) {
    const next = await Promise.race([it.next(), new Promise<null>((r) => setTimeout(() => r(null), waitMs))]);
    if (!next || next.done) break;
    got.push(next.value.id);
  }
  return got;
}

it("each subscription gets every unacknowledged completion, those before it came too; an ack takes a task out of every one", async () => {
  const sup = await Supervisor.open({ storage: join(temp.dir, "s"), mode: "standalone" });
  try {
    const early = sup.subscribeCompletions();
    const a = await sup.run({ id: "a", argv: ["true"] });
    const b = await sup.run({ id: "b", argv: ["false"] });
    await Promise.all([sup.wait(a.id), sup.wait(b.id)]);
    const late = sup.subscribeCompletions();
    expect((await take(early, 2)).sort()).toEqual(["a", "b"]);
    expect((await take(late, 2)).sort()).toEqual(["a", "b"]);
    // The owner's queue is not split with them either.
    expect((await take(sup.completions(), 2)).sort()).toEqual(["a", "b"]);

    const c = await sup.run({ id: "c", argv: ["true"] });
    const d = await sup.run({ id: "d", argv: ["true"] });
    await Promise.all([sup.wait(c.id), sup.wait(d.id)]);
    await sup.ack("c");
    const third = sup.subscribeCompletions();
    expect(await take(early, 5)).toEqual(["d"]);
    expect((await take(third, 5)).sort()).toEqual(["a", "b", "d"]);
    late.close();
    expect(await take(late, 1)).toEqual([]);
  } finally {
    await sup.close();
  }
});
