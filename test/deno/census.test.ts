// The census on Deno 2: the snapshot and "under a leader" on real
// processes, through the same stand-in harness the vitest files use.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mayRetireIdle, readLaunchRecord, takeSnapshot, underLeader } from "../../lib/census/mod.ts";
import { readProcStat } from "../../lib/proc/stat.ts";
import { UNREAPED_CHILD } from "../../harness/scenario/unreaped-child.ts";
import { endStarted, startHarness, started, waitFor } from "../census/harness-process.ts";

Deno.test("snapshot: complete, exact argv, start times", async () => {
  const snap = await takeSnapshot();
  assert.equal(snap.source, "proc");
  assert.equal(snap.complete, true);
  const me = snap.processes.find((p) => p.pid === process.pid);
  assert.ok(me, "this process is in the snapshot");
  assert.match(me.startTime ?? "", /^\d+$/);
  assert.ok(me.argv.length > 0);
});

Deno.test("under a leader: same-group worker, setsid child, group member reparented to init, zombie skipped", async () => {
  const dir = mkdtempSync(join(tmpdir(), "census-deno-"));
  try {
    const pidFile = join(dir, "orphan.pid");
    const h = await startHarness(
      [{ argv: ["sleep", "330"] }, { argv: ["sleep", "331"], setsid: true }, { argv: ["sh", "-c", `sleep 332 & echo $! > ${pidFile}`] }],
      { shellPrefix: UNREAPED_CHILD },
    );
    await waitFor(() => {
      try {
        return readFileSync(pidFile, "utf8").endsWith("\n") && readProcStat(h.children[2]) === null;
      } catch {
        return false;
      }
    });
    const orphan = Number(readFileSync(pidFile, "utf8"));
    started.add(orphan);
    let zombie = 0;
    await waitFor(async () => {
      zombie = (await takeSnapshot()).processes.find((p) => p.ppid === h.pid && p.state === "Z")?.pid ?? 0;
      return zombie !== 0;
    });
    const r = underLeader(await takeSnapshot(), { pid: h.pid, startTime: h.startTime });
    assert.ok(r.ok, "the census answers");
    const why = new Map(r.census.members.map((m) => [m.process.pid, m.why]));
    assert.equal(why.get(h.children[0]), "child-chain");
    assert.equal(why.get(h.children[1]), "child-chain");
    assert.equal(why.get(orphan), "group-member");
    assert.equal(why.has(zombie), false);
    const decision = await mayRetireIdle({ pid: h.pid, startTime: h.startTime }, null);
    assert.equal(decision.verdict, "keep");
  } finally {
    await endStarted();
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("under a leader: a direct-child server lets an idle harness retire; a wrong start time gives no answer", async () => {
  try {
    const record = await readLaunchRecord({
      harness: "other",
      cwd: "/",
      env: { PATH: process.env.PATH },
      servers: [{ name: "s", command: "sleep", args: ["333"] }],
    });
    const h = await startHarness([{ argv: ["sleep", "333"] }]);
    await waitFor(() => readProcStat(h.children[0])?.comm === "sleep");
    const decision = await mayRetireIdle({ pid: h.pid, startTime: h.startTime }, record);
    assert.equal(decision.verdict, "retire", JSON.stringify(decision));
    const other = await mayRetireIdle({ pid: h.pid, startTime: String(Number(h.startTime) + 1) }, record);
    assert.equal(other.reason?.code, "leader-identity-changed");
  } finally {
    await endStarted();
  }
});
