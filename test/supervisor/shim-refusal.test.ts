import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { Supervisor } from "../../lib/mod.ts";
import { shimUnderTest } from "../support/shim-task.ts";

// A shim that refuses its settings (exit 125, no exit code) leaves its line in io/shim-refused: the task ends
// `never_started` with the shim's own words, not `lost` to "a signal outlive did not send".
const shim = shimUnderTest();
if (!shim.path) console.log(`test/supervisor/shim-refusal.test.ts skipped: ${shim.reason}`);

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/**
 * The real shim, handed the supervisor's settings with `watch` made a value it refuses: what a supervisor
 * and a shim that disagree on the contract (an older shim, say) would meet.
 */
function refusingShim(dir: string, real: string): string {
  const path = join(dir, "refusing-shim");
  writeFileSync(path, `#!/bin/sh
tmp=$(mktemp) || exit 1
sed -z 's/^watch=.*/watch=sideways/' > "$tmp"
exec 0< "$tmp"
rm -f "$tmp"
exec '${real}' "$@"
`);
  chmodSync(path, 0o755);
  return path;
}

describe.skipIf(!shim.path)("a task whose shim refuses its settings", () => {
  test("ends never_started with the shim's line as its reason; its command never ran", async () => {
    const dir = mkdtempSync(join(tmpdir(), "outlive-shim-refusal-"));
    dirs.push(dir);
    const storage = join(dir, "s");
    const ran = join(dir, "ran");
    const sup = await Supervisor.open({ storage, shimPath: refusingShim(dir, shim.path!), control: false, log: () => {} });
    try {
      const task = await sup.run({ argv: ["touch", ran] });
      const end = await sup.wait(task.id);
      expect(end.state).toBe("never_started");
      expect(end.exitCode).toBeNull();
      expect(end.reason).toContain(`never started: outlive-shim refused it (outlive-shim: watch: expected inotify or poll, got "sideways")`);
      const io = join(storage, "tasks", task.id, "io");
      expect(readFileSync(join(io, "shim-refused"), "utf8")).toBe(readFileSync(join(io, "stderr"), "utf8"));
      expect(existsSync(ran)).toBe(false);
      // A restart reads the same end from the disk.
      await sup.close();
      const again = await Supervisor.open({ storage, shimPath: shim.path!, control: false, log: () => {} });
      try {
        expect(again.get(task.id)).toMatchObject({ state: "never_started", reason: end.reason });
      } finally {
        await again.close();
      }
    } finally {
      await sup.close().catch(() => {});
    }
  }, 60_000);
});
