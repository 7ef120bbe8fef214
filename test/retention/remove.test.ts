import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Supervisor, type TaskRecord } from "../../lib/mod.ts";
import { RETENTION_BATCH } from "../../lib/retention/retention.ts";
import { waitFor } from "../support/wait.ts";

const MOD = join(__dirname, "..", "..", "dist", "lib", "mod.js");
const roots: string[] = [];
const open = (storage: string, extra: Parameters<typeof Supervisor.open>[0] = {}) => Supervisor.open({ storage, log: () => {}, control: false, ...extra });
function storage(): string {
  const root = mkdtempSync(join(tmpdir(), "outlive-retention-"));
  roots.push(root);
  return root;
}
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

async function finished(sup: Supervisor, shell: string, ack = true): Promise<TaskRecord> {
  const task = await sup.run({ shell });
  await sup.wait(task.id);
  return ack ? sup.ack(task.id) : sup.get(task.id);
}

describe("sup.remove", () => {
  it("removes finished tasks whole, and refuses a live one without removing anything", async () => {
    const root = storage();
    const sup = await open(root);
    const done = await finished(sup, "echo out; echo err >&2", false);
    const live = await sup.run({ argv: ["sleep", "30"] });
    await expect(sup.remove([done.id, live.id])).rejects.toMatchObject({ code: "E_TASK_LIVE", message: expect.stringContaining(`Task ${live.id} is running`) });
    expect(existsSync(join(root, "tasks", done.id, "io", "stdout"))).toBe(true);
    await expect(sup.remove(["t-nosuchtask"])).rejects.toMatchObject({ code: "E_NO_TASK" });
    await expect(sup.remove(["../etc"])).rejects.toMatchObject({ code: "E_BAD_ID" });
    expect(await sup.remove(done.id)).toEqual([done.id]);
    expect(existsSync(join(root, "tasks", done.id))).toBe(false);
    expect(() => sup.get(done.id)).toThrow(/No task/);
    await sup.kill(live.id, { graceMs: 500 });
    await sup.close();
    const again = await open(root);
    expect(again.list().map((r) => r.id)).toEqual([live.id]);
    expect(readdirSync(join(root, "removing"))).toEqual([]);
    await again.close();
  });

  it("keeps quarantined records until removed by name", async () => {
    const root = storage();
    mkdirSync(join(root, "tasks", "t-broken"), { recursive: true, mode: 0o700 });
    writeFileSync(join(root, "tasks", "t-broken", "record.json"), "{ half a rec");
    const sup = await open(root);
    const [name] = await sup.store.quarantined();
    expect(name).toMatch(/^t-broken\./);
    await sup.prune();
    expect(await sup.store.quarantined()).toEqual([name]);
    expect(await sup.remove(name)).toEqual([name]);
    expect(readdirSync(join(root, "quarantine"))).toEqual([]);
    await sup.close();
  });
});

describe("sup.prune and the retention at open", () => {
  it("removes acknowledged finished tasks only, oldest first, and the incarnation files none needs", async () => {
    const root = storage();
    const ids: string[] = [];
    // Three lives of the storage, each adding an incarnation file: as three CLI calls would.
    for (let i = 0; i < 3; i++) {
      const sup = await open(root, { retention: false });
      ids.push((await finished(sup, `echo ${i}`)).id);
      await sup.close();
    }
    const sup = await open(root, { retention: false });
    const unacked = await finished(sup, "echo unacked", false);
    const live = await sup.run({ argv: ["sleep", "30"] });
    expect(readdirSync(join(root, "incarnations"))).toHaveLength(4);
    const result = await sup.prune({ keep: 1 });
    expect(result.removed).toEqual(ids.slice(0, 2));
    expect(sup.list().map((r) => r.id).sort()).toEqual([ids[2], unacked.id, live.id].sort());
    // The third life's file stays (its task remains); the first two go; this life's stays.
    expect(result.incarnationsRemoved).toBe(2);
    expect(readdirSync(join(root, "incarnations")).sort()).toEqual([`${sup.get(ids[2]).incarnation}.json`, `${sup.incarnation.id}.json`].sort());
    await expect(sup.prune({ keep: -1 })).rejects.toMatchObject({ code: "E_BAD_OPTION", message: expect.stringContaining("`prune.keep`") });
    expect((await sup.prune()).removed).toEqual([ids[2]]);
    expect(existsSync(join(root, "tasks", unacked.id, "io", "stdout"))).toBe(true);
    await sup.kill(live.id, { graceMs: 500 });
    await sup.close();
  });

  it("prunes at open by the retention rule, and never lowers the generation of a key", async () => {
    const root = storage();
    const first = await open(root, { retention: false });
    for (let i = 0; i < 3; i++) {
      const t = await first.run({ shell: "true", key: "build" });
      await first.wait(t.id);
      await first.ack(t.id);
    }
    const highest = Math.max(...first.list().map((r) => r.generation ?? 0));
    await first.close();
    const second = await open(root, { retention: { keep: 1 } });
    expect(second.retainedAtOpen.removed).toHaveLength(2);
    expect(second.list()).toHaveLength(1);
    await second.remove(second.list()[0].id);
    await second.close();
    const third = await open(root);
    const next = await third.run({ shell: "true", key: "build" });
    expect(next.generation).toBe(highest + 1);
    await third.wait(next.id);
    await third.close();
  });
});

describe("tasks started with origin \"cli\" (nobody takes their completion)", () => {
  it("are pruned at open by the retention rule without an ack; a supervisor's own unacknowledged ones stay", async () => {
    const root = storage();
    const cli = await open(root, { retention: false, origin: "cli" });
    const mine: TaskRecord[] = [];
    for (let i = 0; i < 3; i++) mine.push(await finished(cli, "true", false));
    await cli.close();
    expect(mine.map((r) => r.origin)).toEqual(["cli", "cli", "cli"]);
    const owner = await open(root, { retention: false });
    const owned = await finished(owner, "true", false);
    expect(owned.origin).toBe(undefined);
    await owner.close();
    const next = await open(root, { retention: { keep: 1 } });
    expect(next.retainedAtOpen).toMatchObject({ removed: [mine[0].id, mine[1].id], keptUnacknowledged: 1 });
    expect(next.list().map((r) => r.id).sort()).toEqual([mine[2].id, owned.id].sort());
    expect((await next.prune({ unacknowledged: true })).removed).toEqual([mine[2].id, owned.id]);
    await next.close();
  });

  it("refuses an origin other than \"cli\", naming the option", async () => {
    await expect(open(storage(), { origin: "shell" as never })).rejects.toThrow(/`origin` option to be absent or "cli", got `"shell"`/);
  });
});

describe("a supervisor that lives long", () => {
  it("prunes by its retention rule as acks come, so its storage stays bounded while it runs", async () => {
    const root = storage();
    const sup = await open(root, { retention: { keep: 5 } });
    const total = RETENTION_BATCH + 20;
    for (let i = 0; i < total; i++) await finished(sup, "true");
    const bound = 5 + RETENTION_BATCH;
    const onDisk = () => readdirSync(join(root, "tasks")).filter((n) => !n.startsWith(".")).length;
    await waitFor("the in-life prune to take the storage back under its bound", () => onDisk() < bound);
    expect(sup.list().length).toBeLessThan(bound);
    expect(sup.list().length).toBeGreaterThanOrEqual(5);
    await sup.close();
  });
});

describe("a removal cut short by a crash", () => {
  /** A storage of `n` finished, acknowledged tasks: one real one, copied under new ids. */
  async function manyFinished(n: number): Promise<{ root: string; ids: string[] }> {
    const root = storage();
    const sup = await open(root, { retention: false });
    const model = await finished(sup, "echo out; echo err >&2");
    await sup.close();
    const ids = [model.id];
    const text = readFileSync(join(root, "tasks", model.id, "record.json"), "utf8");
    for (let i = 1; i < n; i++) {
      const id = `t-copy-${String(i).padStart(4, "0")}`;
      cpSync(join(root, "tasks", model.id), join(root, "tasks", id), { recursive: true });
      writeFileSync(join(root, "tasks", id, "record.json"), text.replaceAll(model.id, id));
      ids.push(id);
    }
    return { root, ids };
  }

  /** Prunes in a child process that SIGKILLs itself at the chosen call of `fn` (rename: taking a task out; rm: deleting it). */
  function pruneKilledAt(root: string, fn: "rename" | "rm", nth: number): Promise<string | null> {
    const script = `
      import fs from "node:fs";
      import fsp from "node:fs/promises";
      import { syncBuiltinESMExports } from "node:module";
      const owner = ${fn === "rename" ? "fs" : "fsp"};
      const name = ${JSON.stringify(fn === "rename" ? "renameSync" : "rm")};
      const original = owner[name];
      let calls = 0;
      owner[name] = (...args) => {
        if (args.some((a) => typeof a === "string" && a.includes("/removing/")) && ++calls === ${nth}) process.kill(process.pid, "SIGKILL");
        return original(...args);
      };
      syncBuiltinESMExports();
      const { Supervisor } = await import(${JSON.stringify(MOD)});
      const sup = await Supervisor.open({ storage: ${JSON.stringify(root)}, retention: false, control: false, log: () => {} });
      await sup.prune();
      await sup.close();
    `;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    return new Promise((resolve) => child.on("exit", (code, signal) => resolve(signal ?? (code === 0 ? null : `exit ${code}: ${err}`))));
  }

  for (const [fn, nth] of [["rename", 1], ["rename", 25], ["rename", 60], ["rm", 1], ["rm", 30]] as const) {
    it(`leaves each task whole or gone, and the next open explains the rest (killed at ${fn} #${nth})`, async () => {
      const { root, ids } = await manyFinished(60);
      expect(await pruneKilledAt(root, fn, nth)).toBe("SIGKILL");
      const present = new Set(readdirSync(join(root, "tasks")).filter((n) => !n.startsWith(".")));
      if (fn === "rename") expect(present.size).toBe(60 - (nth - 1));
      else expect(present.size).toBe(0);
      for (const id of ids) {
        if (!present.has(id)) continue;
        expect(readFileSync(join(root, "tasks", id, "io", "stdout"), "utf8")).toBe("out\n");
        expect(readFileSync(join(root, "tasks", id, "io", "stderr"), "utf8")).toBe("err\n");
      }
      const sup = await open(root, { retention: false });
      expect(sup.replayReport.unreadable).toEqual([]);
      expect(sup.list().map((r) => r.id).sort()).toEqual([...present].sort());
      // What the cut-short removal moved aside is deleted by the open, in the background.
      await waitFor("the open to delete what was moved aside", () => readdirSync(join(root, "removing")).length === 0);
      await sup.close();
    });
  }
});
