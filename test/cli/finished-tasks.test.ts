import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ModuleProcess } from "../../harness/inside/module/module-client.ts";
import { outliveIn } from "../support/cli.ts";

// Finished tasks a CLI user started can go; a holder's completions are never taken from it.
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function fresh(): string {
  const storage = mkdtempSync(join(tmpdir(), "outlive-finished-"));
  cleanups.push(() => rmSync(storage, { recursive: true, force: true }));
  return storage;
}

const outlive = outliveIn;

const record = (storage: string, id: string) => JSON.parse(readFileSync(join(storage, "tasks", id, "record.json"), "utf8"));

async function holder(storage: string): Promise<ModuleProcess> {
  const module = await ModuleProcess.start({ storage, placement: "process-group", livenessMs: 100 });
  cleanups.push(async () => {
    module.child.kill("SIGKILL");
    await module.exited;
  });
  return module;
}

describe("tasks started from the CLI with no holder", () => {
  it("are marked origin \"cli\" and, once finished, pruned without an ack; prune lists them", async () => {
    const storage = fresh();
    const ids: string[] = [];
    for (const code of [0, 3]) {
      const run = await outlive(storage, "run", "--", "sh", "-c", `exit ${code}`);
      expect(run).toMatchObject({ code: 0, err: "" });
      ids.push(run.out.trim());
    }
    for (const id of ids) expect((await outlive(storage, "wait", id)).code).toBeGreaterThanOrEqual(0);
    for (const id of ids) expect(record(storage, id)).toMatchObject({ origin: "cli", acknowledgedAt: null });
    // wait (without --ack) and ps are reads: nothing acknowledged.
    expect((await outlive(storage, "ps")).code).toBe(0);
    for (const id of ids) expect(record(storage, id).acknowledgedAt).toBe(null);
    const pruned = await outlive(storage, "prune");
    expect(pruned).toMatchObject({ code: 0, err: "" });
    expect(pruned.out.split("\n").slice(0, 2)).toEqual(ids);
    expect(pruned.out).toMatch(/^removed 2 tasks, \d+ incarnation files?\n$/m);
    for (const id of ids) expect(existsSync(join(storage, "tasks", id))).toBe(false);
  });

  it("ack of a live task is E_TASK_LIVE, exit 1, and changes nothing", async () => {
    const storage = fresh();
    const id = (await outlive(storage, "run", "--", "sleep", "30")).out.trim();
    cleanups.push(async () => void await outlive(storage, "kill", id, "--grace", "200"));
    const ack = await outlive(storage, "ack", id);
    expect(ack.code).toBe(1);
    expect(ack.err).toContain("[E_TASK_LIVE]");
    expect(ack.err).toContain(id);
    expect(record(storage, id)).toMatchObject({ state: "running", acknowledgedAt: null });
  });

  it("ack takes several ids, and refuses ids together with --all", async () => {
    const storage = fresh();
    const ids = [];
    for (let i = 0; i < 2; i++) ids.push((await outlive(storage, "run", "--", "true")).out.trim());
    for (const id of ids) await outlive(storage, "wait", id);
    const ack = await outlive(storage, "ack", ...ids, "--json");
    expect(ack.code).toBe(0);
    expect(JSON.parse(ack.out).map((t: { id: string }) => t.id)).toEqual(ids);
    for (const id of ids) expect(record(storage, id).acknowledgedAt).not.toBe(null);
    const both = await outlive(storage, "ack", ids[0], "--all");
    expect(both.code).toBe(2);
    expect(both.err).toContain("task ids or --all, not both");
  });
});

describe("with a holder (a long-lived supervisor that takes completions)", () => {
  it("a CLI wait and logs -f never take its completion; ack --all leaves it; prune keeps it and says so", async () => {
    const storage = fresh();
    const module = await holder(storage);
    // Through the holder: its task, no origin.
    const held = (await outlive(storage, "run", "--", "sh", "-c", "echo out; sleep 0.5")).out.trim();
    const [waited, followed] = await Promise.all([outlive(storage, "wait", held), outlive(storage, "logs", "-f", held)]);
    expect(waited.code).toBe(0);
    expect(followed).toMatchObject({ code: 0, out: "out\n" });
    await expect.poll(() => module.completions().map((t) => t.id), { timeout: 10_000 }).toContain(held);
    expect(record(storage, held).origin).toBe(undefined);
    expect(record(storage, held).acknowledgedAt).toBe(null);
    // The holder goes; a task the CLI starts now is the CLI's own.
    module.child.kill("SIGKILL");
    await module.exited;
    const mine = (await outlive(storage, "run", "--", "true")).out.trim();
    await outlive(storage, "wait", mine);
    const all = await outlive(storage, "ack", "--all", "--json");
    expect(all.code).toBe(0);
    expect(JSON.parse(all.out).map((t: { id: string }) => t.id)).toEqual([mine]);
    expect(record(storage, held).acknowledgedAt).toBe(null);
    const pruned = await outlive(storage, "prune");
    expect(pruned.code).toBe(0);
    expect(pruned.out.split("\n")[0]).toBe(mine);
    expect(pruned.out).toContain("kept 1 finished task whose completion was never acknowledged");
    expect(pruned.out).toContain("prune --unacknowledged");
    expect(existsSync(join(storage, "tasks", held))).toBe(true);
    const json = JSON.parse((await outlive(storage, "prune", "--json")).out);
    expect(json).toMatchObject({ removed: [], keptUnacknowledged: 1 });
    const forced = await outlive(storage, "prune", "--unacknowledged");
    expect(forced.out.split("\n")[0]).toBe(held);
    expect(existsSync(join(storage, "tasks", held))).toBe(false);
  });

  it("ack --all through a live holder acknowledges only CLI-started tasks", async () => {
    const storage = fresh();
    const cliTask = (await outlive(storage, "run", "--", "true")).out.trim();
    await outlive(storage, "wait", cliTask);
    const module = await holder(storage);
    const held = (await outlive(storage, "run", "--", "true")).out.trim();
    await expect.poll(() => module.completions().map((t) => t.id), { timeout: 10_000 }).toContain(held);
    const all = await outlive(storage, "ack", "--all", "--json");
    expect(all).toMatchObject({ code: 0, err: "" });
    expect(JSON.parse(all.out).map((t: { id: string }) => t.id)).toEqual([cliTask]);
    expect(record(storage, held).acknowledgedAt).toBe(null);
    // Named by id, the holder's own is acknowledged.
    expect((await outlive(storage, "ack", held)).code).toBe(0);
    expect(record(storage, held).acknowledgedAt).not.toBe(null);
  });
});
