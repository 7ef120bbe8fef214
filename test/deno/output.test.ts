// Following and bounding output under Deno, from the TypeScript sources, on real processes.
// Run: node_modules/.bin/deno test -A test/deno/output.test.ts
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type OutputChunk, Supervisor } from "../../lib/mod.ts";

const bytes = (chunks: OutputChunk[]) => new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c.data])));

Deno.test("output: a follower stops, the next incarnation resumes from its offset, nothing lost or repeated", async () => {
  const storage = mkdtempSync(join(tmpdir(), "outlive-deno-output-"));
  try {
    const first = await Supervisor.open({ storage, log: () => {} });
    const task = await first.run({ shell: "i=0; while [ $i -lt 40 ]; do echo \"line $i\"; i=$((i+1)); sleep 0.02; done" });
    const got: OutputChunk[] = [];
    for await (const c of first.output(task.id)) {
      got.push(c);
      if (bytes(got).length >= 30) break;
    }
    const offset = got.reduce((end, c) => c.offset + c.missed + c.data.byteLength, 0);
    await first.close();
    const second = await Supervisor.open({ storage, log: () => {} });
    try {
      for await (const c of second.output(task.id, { from: offset })) got.push(c);
      const expected = Array.from({ length: 40 }, (_, i) => `line ${i}\n`).join("");
      assert.equal(bytes(got), expected);
      assert.deepEqual(second.get(task.id).outputBytes, { stdout: expected.length, stderr: 0 });
    } finally {
      await second.close();
    }
  } finally {
    rmSync(storage, { recursive: true, force: true });
  }
});

Deno.test("output: the bound keeps the newest bytes and a late follower learns what it missed", async () => {
  const storage = mkdtempSync(join(tmpdir(), "outlive-deno-bound-"));
  const sup = await Supervisor.open({ storage, log: () => {}, maxOutputBytes: 16384 });
  try {
    const task = await sup.run({ shell: "i=0; while [ $i -lt 5000 ]; do echo \"line $i\"; i=$((i+1)); done" });
    await sup.wait(task.id);
    const file = join(storage, "tasks", task.id, "io", "stdout");
    assert.ok(statSync(file).blocks * 512 <= 16384 + 8192, `on disk: ${statSync(file).blocks * 512} bytes`);
    const chunks: OutputChunk[] = [];
    for await (const c of sup.output(task.id)) chunks.push(c);
    assert.equal(chunks[0].missed, Number(readFileSync(`${file}.dropped`, "utf8")));
    assert.ok(bytes(chunks).endsWith("line 4998\nline 4999\n"));
    assert.equal(chunks[0].missed + bytes(chunks).length, statSync(file).size);
  } finally {
    await sup.close();
    rmSync(storage, { recursive: true, force: true });
  }
});
