import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { Supervisor } from "../../lib/mod.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/**
 * A stand-in for outlive-shim that writes the settings it was handed to its stdout (the task's io/stdout),
 * its pid as the command's, and then stays (so the task stays live): what the supervisor asked of each
 * shim can be read back, whatever inotify instances the machine has left.
 */
function settingsEcho(dir: string): string {
  const path = join(dir, "settings-echo");
  writeFileSync(path, `#!/bin/sh
settings=$(tr '\\0' '\\n')
printf '%s\\n' "$settings"
io=$(printf '%s\\n' "$settings" | sed -n 's/^io=//p')
echo $$ > "$io/command-pid"
exec sleep 30
`);
  chmodSync(path, 0o755);
  return path;
}

test("inotifyTasks: N live tasks' shims are asked to watch with inotify, the next ones to poll", async () => {
  const dir = mkdtempSync(join(tmpdir(), "outlive-inotify-tasks-"));
  dirs.push(dir);
  const storage = join(dir, "s");
  const sup = await Supervisor.open({ storage, shimPath: settingsEcho(dir), inotifyTasks: 2, control: false, log: () => {} });
  try {
    const watch: string[] = [];
    for (let i = 0; i < 3; i++) {
      const task = await sup.run({ argv: ["true"] });
      const settings = readFileSync(join(storage, "tasks", task.id, "io", "stdout"), "utf8");
      watch.push(/^watch=(\w+)$/m.exec(settings)?.[1] ?? "none");
    }
    expect(watch).toEqual(["inotify", "inotify", "poll"]);
  } finally {
    await sup.stopAll();
    await sup.close();
  }
});
