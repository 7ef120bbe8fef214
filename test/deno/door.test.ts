// The door under Deno: the user's command's own pid, and a program that cannot run refused before
// anything is stored. Run: node_modules/.bin/deno test -A test/deno/door.test.ts
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Supervisor } from "../../lib/mod.ts";

Deno.test("commandPid is the command's own pid; a missing program is E_NOT_FOUND and the key stays", async () => {
  const storage = mkdtempSync(join(tmpdir(), "outlive-deno-door-"));
  const sup = await Supervisor.open({ storage, log: () => {} });
  try {
    const task = await sup.run({ id: "live", key: "k", argv: ["sleep", "30"] });
    assert.notEqual(task.commandPid, task.pid);
    assert.deepEqual(readFileSync(`/proc/${task.commandPid}/cmdline`, "utf8").split("\0").slice(0, -1), ["sleep", "30"]);
    await assert.rejects(sup.run({ id: "refused", key: "k", argv: ["/no/such/binary"] }), { code: "E_NOT_FOUND" });
    await assert.rejects(sup.run({ argv: ["/etc/passwd"] }), { code: "E_NOT_EXECUTABLE" });
    assert.deepEqual(readdirSync(join(storage, "tasks")).filter((n) => !n.startsWith(".")), ["live"]);
    assert.equal(sup.list().find((t) => t.id === "live")?.state, "running");
    assert.equal((await sup.kill("live")).record.state, "killed");
    assert.equal(readFileSync(join(storage, "tasks", "live", "io", "stderr"), "utf8"), "");
  } finally {
    await sup.close();
    rmSync(storage, { recursive: true, force: true });
  }
});
