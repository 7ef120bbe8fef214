// Hostile records under Deno: the same library from its TypeScript sources.
// Run: node_modules/.bin/deno test -A test/deno/hostile.test.ts
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Supervisor } from "../../lib/mod.ts";
import { goodRecord, hashOthers, hashTree, makeBait, makeStorage, recordText, removeAll, writeTask } from "../reliability/support/hostile-storage.ts";

const GOOD = ["g-1", "g-2"];
const open = (storage: string) => Supervisor.open({ storage, placement: "process-group", prefix: "outlive-test-deno", log: () => {} });
const running = (id: string) =>
  recordText(goodRecord(id, { state: "running", exitCode: null, reason: null, finishedAt: null, pid: 999_999, pgid: 999_999, acknowledgedAt: null }));

async function withHostile(make: (root: string, dir: string) => void, check: (entry: { reason: string; kind: string; quarantinedTo: string | null }, root: string) => void) {
  const root = makeStorage("deno-hostile");
  try {
    for (const id of GOOD) writeTask(root, id, recordText(goodRecord(id)));
    const dir = writeTask(root, "h-1", running("h-1"));
    make(root, dir);
    const before = hashOthers(root, "h-1");
    const sup = await open(root);
    try {
      assert.deepEqual(sup.list().map((r) => r.id).sort(), GOOD);
      const u = sup.replayReport.unreadable.find((x) => x.id === "h-1");
      assert.ok(u, "the hostile task is reported");
      check({ reason: u.problem.reason, kind: u.problem.kind, quarantinedTo: u.quarantinedTo }, root);
    } finally {
      await sup.close();
    }
    assert.deepEqual(hashOthers(root, "h-1"), before);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

Deno.test("truncated, random and wrong-typed records are quarantined with the reason, bytes kept", async () => {
  const full = running("h-1");
  const cases: Array<[string | Uint8Array, RegExp]> = [
    [full.slice(0, full.length >> 1), /not JSON/],
    [crypto.getRandomValues(new Uint8Array(300)), /not JSON|not a JSON object|schemaVersion/],
    [recordText({ ...JSON.parse(full), pid: "12" }), /"pid"/],
    [recordText({ ...JSON.parse(full), command: { argv: [] } }), /"command"/],
    [recordText({ ...JSON.parse(full), outputTail: "x".repeat(1_100_000) }), /bytes, larger than any record/],
    [recordText({ ...JSON.parse(full), location: { cgroupDir: "/sys/fs/cgroup/unified/other", cgroup: "/other" } }), /"location"/],
  ];
  for (const [content, reason] of cases) {
    await withHostile((_, dir) => writeFileSync(join(dir, "record.json"), content), (e) => {
      assert.equal(e.kind, "corrupt");
      assert.match(e.reason, reason);
      assert.ok(e.quarantinedTo && existsSync(e.quarantinedTo));
      assert.deepEqual(new Uint8Array(readFileSync(join(e.quarantinedTo, "record.json"))), new Uint8Array(Buffer.from(content)));
      assert.equal(readFileSync(join(e.quarantinedTo, "quarantine-reason.txt"), "utf8"), `${e.reason}\n`);
    });
  }
});

Deno.test("a newer schema is left in place, untouched, and reported", async () => {
  let hash = "";
  await withHostile((_, dir) => {
    writeFileSync(join(dir, "record.json"), recordText({ ...goodRecord("h-1"), schemaVersion: 99 }));
    hash = hashTree(dir);
  }, (e, root) => {
    assert.equal(e.kind, "newer-schema");
    assert.equal(e.quarantinedTo, null);
    assert.equal(hashTree(join(root, "tasks", "h-1")), hash);
  });
});

Deno.test("symlinks (record.json, task dir, io/stdout) are never followed; a FIFO never hangs", async () => {
  const bait = makeBait();
  try {
    writeFileSync(bait.file, running("h-1"));
    const stamp = bait.stamp();
    await withHostile((_, dir) => {
      rmSync(join(dir, "record.json"));
      symlinkSync(bait.file, join(dir, "record.json"));
    }, (e) => assert.match(e.reason, /record\.json is a symlink/));
    await withHostile((_, dir) => {
      removeAll(dir);
      symlinkSync(bait.dir, dir);
    }, (e) => assert.match(e.reason, /task directory is a symlink/));
    await withHostile((_, dir) => {
      rmSync(join(dir, "io", "stdout"));
      symlinkSync(bait.file, join(dir, "io", "stdout"));
    }, (e) => assert.match(e.reason, /io\/stdout is a symlink/));
    assert.equal(bait.stamp(), stamp, "the file outside the storage was neither read nor written");
    await withHostile((_, dir) => {
      rmSync(join(dir, "record.json"));
      assert.equal(spawnSync("mkfifo", [join(dir, "record.json")]).status, 0);
    }, (e) => assert.match(e.reason, /not a regular file/));
  } finally {
    removeAll(bait.dir);
  }
});

Deno.test("a world-writable storage root is refused, and left as it was", async () => {
  const root = makeStorage("deno-mode");
  try {
    chmodSync(root, 0o777);
    await assert.rejects(open(root), (e: { code?: string; message: string }) => e.code === "E_STORAGE" && e.message.includes("777"));
    assert.equal(spawnSync("ls", ["-A", root]).stdout.toString(), "");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
