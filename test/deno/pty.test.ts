// PTY tasks on Deno 2: a terminal held inside the task's placement, input and resize from the next
// supervisor, the real exit code, and bad input refused — the same library code the vitest files run.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Supervisor, unescapeKeys } from "../../lib/internal.ts";
import { waitUntil } from "../../lib/kill/process-group.ts";

async function seen(root: string, id: string, pattern: RegExp): Promise<void> {
  const out = () => readFileSync(join(root, "tasks", id, "io", "stdout"), "utf8");
  assert.ok(await waitUntil(() => pattern.test(out()), 10_000, 10), `no ${pattern} in ${JSON.stringify(out())}`);
}

Deno.test("a PTY task takes input and resizes from the next supervisor and reports its real exit code", async () => {
  const root = mkdtempSync(join(tmpdir(), "outlive-deno-pty-"));
  try {
    let sup = await Supervisor.open({ storage: root, log: () => {} });
    await sup.run({ id: "sh", argv: ["bash", "--norc", "--noprofile", "-i"], pty: { cols: 90, rows: 20 } });
    await sup.write("sh", "stty size\n");
    await seen(root, "sh", /20 90\r\n/);
    await sup.close();

    sup = await Supervisor.open({ storage: root, log: () => {} });
    try {
      assert.equal(sup.get("sh").state, "running");
      await sup.resize("sh", 120, 40);
      await sup.write("sh", unescapeKeys("stty size; [ -t 1 ] && echo tty-$((3*3))\\n"));
      await seen(root, "sh", /40 120\r\ntty-9\r\n/);
      await assert.rejects(sup.resize("sh", 100000, 40), { code: "E_BAD_OPTION" });
      await sup.write("sh", "exit 6\n");
      const done = await sup.wait("sh");
      assert.equal(done.exitCode, 6);
      await assert.rejects(sup.write("sh", "x"), { code: "E_PTY_CLOSED" });
    } finally {
      await sup.close();
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
