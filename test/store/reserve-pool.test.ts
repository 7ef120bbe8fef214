import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ReservePool } from "../../lib/store/full-disk/reserve-pool.ts";
import { TaskStore } from "../../lib/store/task-store.ts";
import { SCHEMA_VERSION, type TaskRecord } from "../../lib/mod.ts";

const roots: string[] = [];
const newRoot = () => {
  roots.push(mkdtempSync(join(tmpdir(), "outlive-pool-test-")));
  return roots.at(-1)!;
};
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});
const reserves = (root: string) => readdirSync(join(root, "reserves")).sort();

const record = (id: string, over: Partial<TaskRecord> = {}): TaskRecord => ({
  schemaVersion: SCHEMA_VERSION, id, key: null, generation: null, command: { argv: ["true"] }, cwd: "/",
  state: "starting", exitCode: null, reason: null, createdAt: new Date().toISOString(), startedAt: null,
  finishedAt: null, lastOutputAt: null, outputTail: null, timeoutSeconds: null,
  deadlineAt: new Date(Date.now() + 3_600_000).toISOString(), deadlineIsTimeout: false, memoryMaxBytes: null,
  pid: null, pgid: null, startTime: null, bootId: "b", incarnation: "i", supervisorCgroup: null,
  placement: "process-group", location: {}, killStartedAt: null, killReason: null, killState: null, acknowledgedAt: null,
  ...over,
});

describe("ReservePool", () => {
  it("makes one terminal and two live reserves per live task, of real blocks, and takes the smallest that fits", () => {
    const root = newRoot();
    const pool = ReservePool.open(root);
    pool.ensure(2, { terminal: 8192, live: 4096 });
    expect([pool.size("terminal"), pool.size("live")]).toEqual([2, 4]);
    for (const name of reserves(root)) {
      const info = statSync(join(root, "reserves", name));
      // Spaces, not a hole: the blocks are really held.
      expect(info.blocks * 512).toBeGreaterThanOrEqual(info.size);
    }
    // A bigger need makes a bigger one beside the others; a small record still takes a small one.
    pool.ensure(2, { terminal: 16384, live: 4096 });
    expect(pool.size("terminal")).toBe(3);
    expect(pool.take("terminal", 10_000)).toMatch(/terminal-16384-/);
    expect(pool.take("terminal", 100)).toMatch(/terminal-8192-/);
    expect(pool.take("live", 5000)).toBeNull();
  });

  it("takes stock of what an earlier life left, and ignores what is not a reserve", () => {
    const root = newRoot();
    ReservePool.open(root).ensure(3, { terminal: 8192, live: 4096 });
    writeFileSync(join(root, "reserves", "stray"), "x");
    const again = ReservePool.open(root);
    expect([again.size("terminal"), again.size("live")]).toEqual([3, 6]);
    again.ensure(3, { terminal: 8192, live: 4096 });
    expect(reserves(root).length).toBe(10); // nothing made: the pool was full
  });
});

describe("TaskStore's reserves", () => {
  it("a task that ends without needing its share leaves it in the pool: the next task makes no reserve file", async () => {
    const root = newRoot();
    const store = await TaskStore.open(root);
    await store.create(record("t-one"));
    const first = reserves(root);
    expect(first.filter((n) => n.startsWith("terminal-")).length).toBe(1);
    expect(first.filter((n) => n.startsWith("live-")).length).toBe(2);
    await store.write(record("t-one", { state: "exited", exitCode: 0, finishedAt: new Date().toISOString() }));
    await store.create(record("t-two"));
    expect(reserves(root)).toEqual(first);
    // Two live at once: two shares.
    await store.create(record("t-three"));
    expect(reserves(root).filter((n) => n.startsWith("terminal-")).length).toBe(2);
    expect(readdirSync(join(root, "tasks", "t-two")).filter((n) => n.includes("reserve"))).toEqual([]);
  });

  it("a live task an older outlive started keeps its own reserves until its end, then they are removed", async () => {
    const root = newRoot();
    const old = await TaskStore.open(root);
    await old.create(record("t-legacy", { state: "running" }));
    for (const n of [".record.reserve", ".record.reserve-live-1", ".record.reserve-live-2"]) writeFileSync(join(root, "tasks", "t-legacy", n), " ".repeat(8192));
    const store = await TaskStore.open(root);
    const { records } = await store.loadAll();
    expect(records.map((r) => r.id)).toEqual(["t-legacy"]);
    await store.write({ ...records[0], state: "exited", exitCode: 0, finishedAt: new Date().toISOString() });
    expect(readdirSync(join(root, "tasks", "t-legacy")).filter((n) => n.includes("reserve"))).toEqual([]);
  });
});
