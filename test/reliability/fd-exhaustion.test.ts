/**
 * File descriptor exhaustion, for real: a supervisor process that has used
 * up all but a few of its descriptors replays and runs many tasks. Every
 * failure must be a clear error value; nothing crashes and no record is
 * damaged (none quarantined, every one readable, no temp file left).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isRunning, parseRecord, Supervisor } from "../../lib/internal.ts";

const LIB = join(__dirname, "..", "..", "dist", "lib", "mod.js");
const BIN = join(__dirname, "..", "..", "dist", "scripts", "bin.js");
const storage = mkdtempSync(join(tmpdir(), "outlive-fds-"));
const script = join(storage, "..", `${storage.split("/").pop()}-starved.mjs`);
afterAll(async () => {
  const sup = await Supervisor.open({ storage, log: () => {} });
  await sup.stopAll();
  await sup.close();
  rmSync(storage, { recursive: true, force: true });
  rmSync(script, { force: true });
});

// Uses up descriptors until only FREE remain, then opens the storage, runs tasks and kills one.
writeFileSync(script, `
import { closeSync, openSync } from "node:fs";
const { Supervisor } = await import(${JSON.stringify(LIB)});
const free = Number(process.argv[2]);
const held = [];
try { for (;;) held.push(openSync("/dev/null", "r")); } catch {}
for (let i = 0; i < free && held.length; i++) closeSync(held.pop());
const outcome = (p) => p.then((v) => "ok", (e) => (e && typeof e.code === "string" ? e.code + ": " + e.message : "UNCLEAR " + String(e)));
const results = {};
let sup = null;
results.open = await outcome(Supervisor.open({ storage: process.argv[3], log: () => {} }).then((s) => (sup = s)));
if (sup) {
  for (let i = 0; i < 5; i++) results["run" + i] = await outcome(sup.run({ argv: ["sleep", "30"] }));
  const live = sup.list().find((r) => r.state === "running");
  if (live) results.kill = await outcome(sup.kill(live.id, { graceMs: 200 }));
  results.close = await outcome(sup.close());
}
for (const fd of held) closeSync(fd);
console.log(JSON.stringify(results));
`);

function records(): string[] {
  return readdirSync(join(storage, "tasks")).filter((n) => !n.startsWith("."));
}

describe("too few file descriptors", () => {
  it("replaying and running many tasks with 0 to 24 descriptors left: clear errors, no crash, no record damaged", async () => {
    const sup = await Supervisor.open({ storage, log: () => {} });
    for (let i = 0; i < 40; i++) await sup.run({ argv: ["sh", "-c", i % 2 ? "sleep 30" : `exit ${i % 7}`] });
    await sup.close();
    for (const free of [0, 2, 4, 8, 16, 24]) {
      const r = spawnSync(process.execPath, [script, String(free), storage], { encoding: "utf8", timeout: 60_000 });
      expect(r.status, `free=${free}: ${r.stderr}`).toBe(0);
      const results = JSON.parse(r.stdout) as Record<string, string>;
      for (const [step, outcome] of Object.entries(results)) {
        expect(outcome, `free=${free} ${step}`).toMatch(/^(ok|E_[A-Z_]+: .+|E[A-Z]+: .+)$/);
      }
      expect(readdirSync(join(storage, "quarantine")), `free=${free}`).toEqual([]);
      for (const id of records()) {
        const dir = join(storage, "tasks", id);
        expect(parseRecord(readFileSync(join(dir, "record.json"), "utf8"), id).ok, `${id} after free=${free}`).toBe(true);
        expect(readdirSync(dir).filter((n) => n.endsWith(".tmp"))).toEqual([]);
      }
    }
    // With descriptors again, everything goes on: every record readable, the live ones adopted or truly ended.
    const after = await Supervisor.open({ storage, log: () => {} });
    try {
      expect(after.replayReport.unreadable).toEqual([]);
      for (const r of after.list()) if (r.state === "running") expect(isRunning(r.pid!)).toBe(true);
    } finally {
      await after.close();
    }
  });

  it("the installed CLI under ulimit -n too low to load: one line with the errno, exit 1", () => {
    // The bundled CLI opens few files, so where its load runs short depends on Node's own needs: a few
    // limits around it, each either enough (exit 0) or one line with the errno and the hint, and at least
    // one too low (a limit too low for Node itself to start is below these).
    let refused = 0;
    for (const limit of [30, 26, 24, 22, 20]) {
      const r = spawnSync("sh", ["-c", `ulimit -n ${limit} && exec "$@"`, "sh", process.execPath, BIN, "ps", "--storage", storage], { encoding: "utf8" });
      if (r.status === 0) continue;
      refused++;
      expect(r.status, `ulimit -n ${limit}: ${r.stderr}`).toBe(1);
      expect(r.stderr.trim().split("\n"), `ulimit -n ${limit}`).toHaveLength(1);
      expect(r.stderr).toMatch(/EMFILE.*ulimit -n/);
    }
    expect(refused).toBeGreaterThan(0);
  });
});
