import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Supervisor } from "../../lib/mod.ts";
import { tempDir } from "../support/cli.ts";
import { waitFor } from "../support/wait.ts";

// ensure: under a key, the same spec keeps the live task; another replaces it, and says so.
const { dir: storage, remove } = tempDir("outlive-ensure-");
let sup: Supervisor | null = null;
afterEach(async () => {
  await sup?.stopAll().catch(() => {});
  await sup?.close();
  sup = null;
});
afterAll(remove);
const open = async () => (sup = await Supervisor.open({ storage, mode: "standalone", log: () => {}, graceMs: 500 }));
const server = { argv: ["sleep", "300"], key: "dev", ensure: true, env: { SECRET_TOKEN: "hunter2-not-in-the-record" } };

describe("ensure", () => {
  it("keeps the live task of the same spec, replaces one of another and says what differed; no env value reaches the record", async () => {
    const s = await open();
    const first = await s.run(server);
    expect(first.ensured).toEqual({ outcome: "started", replaced: null, differs: [] });
    const again = await s.run({ ...server, env: { SECRET_TOKEN: "hunter2-not-in-the-record" } });
    expect(again.id).toBe(first.id);
    expect(again.ensured).toEqual({ outcome: "kept", replaced: null, differs: [] });
    const record = readFileSync(join(storage, "tasks", first.id, "record.json"), "utf8");
    expect(record).not.toContain("hunter2");
    expect(JSON.parse(record)).toMatchObject({ envNames: ["SECRET_TOKEN"], specDigest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });

    const otherEnv = await s.run({ ...server, env: { SECRET_TOKEN: "rotated" } });
    expect(otherEnv.ensured).toEqual({ outcome: "replaced", replaced: first.id, differs: ["env"] });
    expect((await s.wait(first.id)).reason).toMatch(/superseded by generation/);
    const otherCommand = await s.run({ ...server, env: { SECRET_TOKEN: "rotated" }, argv: ["sleep", "301"], readyLog: "never" });
    expect(otherCommand.ensured).toEqual({ outcome: "replaced", replaced: otherEnv.id, differs: ["command", "readiness"] });
  });

  it("gives agents that retry at once one task: ensures under a key are taken one at a time, a start under way is waited for", async () => {
    const s = await open();
    const plain = s.run({ argv: ["sleep", "300"], key: "race" });
    const ensured = await Promise.all([1, 2, 3].map(() => s.run({ argv: ["sleep", "300"], key: "race", ensure: true })));
    const started = await plain;
    expect(new Set(ensured.map((r) => r.id))).toEqual(new Set([started.id]));
    expect(ensured.every((r) => r.ensured?.outcome === "kept")).toBe(true);
    expect(s.list().filter((r) => r.key === "race")).toHaveLength(1);
  });

  it("replaces one being killed or ended; a task waiting out a restart delay counts as live and is kept", async () => {
    const s = await open();
    const stubborn = await s.run({ shell: "trap '' TERM; sleep 300", key: "k", ensure: true });
    const killing = s.kill(stubborn.id, { graceMs: 3000 });
    await waitFor("the killing record", () => s.get(stubborn.id).state === "killing");
    const next = await s.run({ shell: "trap '' TERM; sleep 300", key: "k", ensure: true });
    expect(next.id).not.toBe(stubborn.id);
    expect(next.ensured).toMatchObject({ outcome: "replaced", replaced: stubborn.id });
    await killing;
    await s.kill(next.id, { graceMs: 100 });
    const after = await s.run({ shell: "trap '' TERM; sleep 300", key: "k", ensure: true });
    expect(after.ensured).toEqual({ outcome: "started", replaced: null, differs: [] });

    const crashing = { shell: "exit 1", key: "crash", ensure: true, restart: "always" as const, restartDelaySeconds: 60 };
    const first = await s.run(crashing);
    await waitFor("the first attempt's end", () => readFileSync(join(storage, "tasks", first.id, "io", "attempts"), "utf8").includes('"end"'));
    const kept = await s.run(crashing);
    expect(kept).toMatchObject({ id: first.id, state: "running", ensured: { outcome: "kept" } });
  });

  it("compares the env file's contents, not its name", async () => {
    const s = await open();
    const file = join(storage, "app.env");
    writeFileSync(file, "API_KEY=key-value-first\n");
    const a = await s.run({ argv: ["sleep", "300"], key: "envf", ensure: true, envFile: file });
    expect((await s.run({ argv: ["sleep", "300"], key: "envf", ensure: true, envFile: file })).id).toBe(a.id);
    writeFileSync(file, "API_KEY=key-value-second\n");
    const b = await s.run({ argv: ["sleep", "300"], key: "envf", ensure: true, envFile: file });
    expect(b.ensured).toEqual({ outcome: "replaced", replaced: a.id, differs: ["env"] });
    expect(readFileSync(join(storage, "tasks", b.id, "record.json"), "utf8")).not.toMatch(/key-value/);
  });
});
