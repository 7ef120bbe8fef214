import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Supervisor, type TaskRecord } from "../../lib/mod.ts";

const opened: Array<{ sup: Supervisor; storage: string }> = [];
afterEach(async () => {
  for (const { sup, storage } of opened.splice(0)) {
    await sup.stopAll().catch(() => {});
    await sup.close();
    rmSync(storage, { recursive: true, force: true });
  }
});

async function open(storage = mkdtempSync(join(tmpdir(), "outlive-keyed-"))) {
  const sup = await Supervisor.open({ storage, log: () => {}, livenessIntervalMs: 50 });
  opened.push({ sup, storage });
  return sup;
}

// The predecessor of the field report: traps TERM, keeps writing, exits ~600 ms later.
const LINGERING = "trap 'echo late; sleep 0.6; echo later; exit 143' TERM; while :; do echo old; sleep 0.05; done";

describe("run({ key }) supersedes the key's live task", () => {
  it("ends the predecessor as 'superseded by generation N' and never lets its late exit touch the successor", async () => {
    const sup = await open();
    const first = await sup.run({ key: "session-1", shell: LINGERING });
    const second = await sup.run({ key: "session-1", shell: "echo new; sleep 0.2; exit 5" });
    expect(first.generation).toBe(1);
    expect(second.generation).toBe(2);
    expect(sup.current("session-1")?.id).toBe(second.id);

    // The successor exits BEFORE the predecessor's late close (the hole in the naive fix).
    const secondDone = await sup.wait(second.id);
    expect(secondDone).toMatchObject({ state: "exited", exitCode: 5 });
    const firstDone = await sup.wait(first.id);
    expect(firstDone.state).toBe("killed");
    expect(firstDone.reason).toContain("superseded by generation 2");
    // The successor's record and output are its own.
    expect(sup.get(second.id)).toMatchObject({ state: "exited", exitCode: 5 });
    const out = readFileSync(join(sup.store.root, "tasks", second.id, "io", "stdout"), "utf8");
    expect(out).toBe("new\n");
    expect(sup.current("session-1")).toBeNull();
  });

  it("a third run supersedes the second while the first still drains; each generation settles once", async () => {
    const sup = await open();
    const a = await sup.run({ key: "k", shell: LINGERING });
    const b = await sup.run({ key: "k", shell: LINGERING });
    const c = await sup.run({ key: "k", argv: ["sleep", "30"] });
    expect(sup.current("k")?.id).toBe(c.id);
    const [ad, bd] = await Promise.all([sup.wait(a.id), sup.wait(b.id)]);
    expect(ad.reason).toContain("superseded by generation 2");
    expect(bd.reason).toContain("superseded by generation 3");
    expect(sup.get(c.id).state).toBe("running");
    const seen: TaskRecord[] = [];
    const iter = sup.completions()[Symbol.asyncIterator]();
    seen.push((await iter.next()).value, (await iter.next()).value);
    expect(seen.map((r) => r.id).sort()).toEqual([a.id, b.id].sort());
  });

  it("generations keep counting after a restart, and a live keyed task takes its key again", async () => {
    const storage = mkdtempSync(join(tmpdir(), "outlive-keyed-"));
    const first = await Supervisor.open({ storage, log: () => {} });
    await first.run({ key: "tab", argv: ["true"] });
    const live = await first.run({ key: "tab", argv: ["sleep", "30"] });
    await first.close();
    const sup = await open(storage);
    expect(sup.current("tab")?.id).toBe(live.id);
    const next = await sup.run({ key: "tab", argv: ["true"] });
    expect(next.generation).toBe(3);
    const ended = await sup.wait(live.id);
    expect(ended.reason).toContain("superseded by generation 3");
  });
});
