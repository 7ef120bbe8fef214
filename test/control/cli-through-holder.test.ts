import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ModuleProcess } from "../../harness/inside/module/module-client.ts";
import { controlSocketPath } from "../../lib/mod.ts";
import { outliveIn } from "../support/cli.ts";

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function fresh(): string {
  const storage = mkdtempSync(join(tmpdir(), "outlive-ctl-"));
  cleanups.push(() => rmSync(storage, { recursive: true, force: true }));
  return storage;
}

const outlive = outliveIn;

async function holder(storage: string): Promise<ModuleProcess> {
  const module = await ModuleProcess.start({ storage, placement: "process-group", livenessMs: 100 });
  cleanups.push(async () => {
    await module.request("list").then(async ({ tasks }) => {
      for (const t of tasks) if (["running", "starting"].includes(t.state)) await module.request("kill", { id: t.id, graceMs: 200 });
    }).catch(() => {});
    module.child.kill("SIGKILL");
    await module.exited;
  });
  return module;
}

describe("the CLI and a long-lived supervisor holding the storage", () => {
  it("runs, kills, waits, acks, removes and prunes through the holder's control channel", async () => {
    const storage = fresh();
    const module = await holder(storage);
    const ps = await outlive(storage, "ps");
    expect(ps.out).toContain(`held by supervisor pid ${module.child.pid}`);
    expect(ps.out).toContain("commands go through its control channel");
    const run = await outlive(storage, "run", "--env", "GREETING=hi there", "--cwd", "/tmp", "--", "sh", "-c", 'echo "$GREETING from $(pwd)"; sleep 30');
    expect(run).toMatchObject({ code: 0, err: "" });
    const id = run.out.trim();
    // The holder started it: it is in the module's own list, and its output is the task's.
    const listed = (await module.request("list")).tasks.find((t: { id: string }) => t.id === id);
    expect(listed).toMatchObject({ state: "running", cwd: "/tmp", incarnation: module.ready.incarnation ?? listed.incarnation });
    expect(listed.incarnation).not.toBe(undefined);
    await expect.poll(async () => (await outlive(storage, "logs", id)).out).toBe("hi there from /tmp\n");
    expect((await outlive(storage, "rm", id)).code).toBe(1);
    const killed = await outlive(storage, "kill", id, "--grace", "500", "--json");
    expect(killed.code).toBe(0);
    expect(JSON.parse(killed.out)).toMatchObject({ how: "term", task: { id, state: "killed" } });
    const waited = await outlive(storage, "wait", id);
    expect(waited.code).toBe(125);
    const four = await outlive(storage, "run", "--", "sh", "-c", "sleep 0.3; exit 4");
    expect((await outlive(storage, "wait", four.out.trim(), "--ack")).code).toBe(4);
    expect((await outlive(storage, "ack", id)).code).toBe(0);
    expect((await module.request("list")).tasks.filter((t: { acknowledgedAt: string | null }) => t.acknowledgedAt)).toHaveLength(2);
    const pruned = await outlive(storage, "prune", "--keep", "1", "--json");
    expect(JSON.parse(pruned.out).removed).toEqual([id]);
    expect((await outlive(storage, "rm", four.out.trim())).out.trim()).toBe(four.out.trim());
    expect((await module.request("list")).tasks).toEqual([]);
  });

  it("four CLI runs at once all start, with a holder and without one", async () => {
    for (const withHolder of [false, true]) {
      const storage = fresh();
      if (withHolder) await holder(storage);
      const runs = await Promise.all([0, 1, 2, 3].map((i) => outlive(storage, "run", "--", "sh", "-c", `exit ${i}`)));
      for (const r of runs) expect(r).toMatchObject({ code: 0, err: "" });
      const ids = runs.map((r) => r.out.trim());
      expect(new Set(ids).size).toBe(4);
      const codes = await Promise.all(ids.map((id) => outlive(storage, "wait", id).then((w) => w.code)));
      expect(codes).toEqual([0, 1, 2, 3]);
      // replay makes the command the storage's supervisor: a live holder keeps that to itself (and says so).
      // The prune keeps all four: tasks the CLI started may go without an ack, and one pruned under the ack would fail it.
      const mixed = await Promise.all([outlive(storage, "ps"), outlive(storage, "ps"), outlive(storage, withHolder ? "ps" : "replay"), outlive(storage, "ack", ...ids), outlive(storage, "prune", "--keep", "4")]);
      for (const r of mixed) expect(r).toMatchObject({ code: 0, err: "" });
    }
  });

  it("keeps the channel to the storage's owner: socket 0600 in a 0700 directory", async (ctx) => {
    const storage = fresh();
    await holder(storage);
    const socket = controlSocketPath(storage);
    expect(statSync(join(storage, "control")).mode & 0o777).toBe(0o700);
    expect(statSync(socket).mode & 0o777).toBe(0o600);
    if (process.getuid?.() !== 0) return ctx.skip("another user cannot be impersonated without root");
    const nobody = spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "true"]);
    if (nobody.status !== 0) return ctx.skip(`setpriv cannot switch to uid 65534 here: ${nobody.stderr}`);
    // Open the storage's own bits to others (outlive allows a readable storage): the channel's directory still keeps them out.
    chmodSync(storage, 0o755);
    const probe = `require("net").connect(${JSON.stringify(socket)}).on("connect", () => { console.log("connected"); process.exit(0); }).on("error", (e) => { console.log(e.code); process.exit(0); })`;
    const r = spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "-e", probe], { encoding: "utf8" });
    expect(r.stdout.trim()).toBe("EACCES");
  });

  it("refuses bad input with exit 2 and one line naming the flag, changing nothing", async () => {
    const storage = fresh();
    await holder(storage);
    for (const [command, ...args] of [["run", "--env", "NOEQUALS", "--", "true"], ["prune", "--older-than", "a week"], ["prune", "--keep", "-3"], ["ps", "--state", "zombie"]]) {
      const r = await outlive(storage, command, ...args);
      expect(r.code).toBe(2);
      expect(r.err.trim().split("\n")).toHaveLength(1);
      expect(r.err).toContain(`--${args[0].replace(/^--/, "")}`);
    }
    expect(JSON.parse((await outlive(storage, "ps", "--json")).out).tasks).toEqual([]);
  });
});
