import { describe, expect, it } from "vitest";
import { isSpawnerCommandLine, SPAWNER_MODE, spawnerArgv } from "../../lib/spawner/spawner-command-line.ts";

// A spawner is known by its command line: the npm package's spawner-main.js (or Deno on the .ts), or the
// single executable in its spawner mode, each followed by --socket and this storage's socket. Nothing else.
const socket = "/s/spawner/spawner.sock";
const flags = { socket, record: "/s/spawner/spawner.json", idleMs: 60_000, enter: null };

describe("the spawner's command line", () => {
  it("recognises each way the spawner is started, by this release and an older one", () => {
    const started = [
      spawnerArgv(["/usr/bin/node", "/p/node_modules/outlive/dist/lib/spawner/spawner-main.js"], flags),
      spawnerArgv(["/usr/bin/deno", "run", "--allow-all", "--quiet", "/p/lib/spawner/spawner-main.ts"], flags),
      spawnerArgv(["/opt/outlive/outlive", SPAWNER_MODE], { ...flags, enter: "/sys/fs/cgroup/outlive/spawner/cgroup.procs" }),
      // A spawner an older release started: its file, then the same flags.
      ["node", "/old/dist/lib/spawner/spawner-main.js", "--socket", socket, "--record", "/s/spawner/spawner.json", "--idle-ms", "60000"],
    ];
    for (const argv of started) expect(isSpawnerCommandLine(argv, socket), argv.join(" ")).toBe(true);
  });

  it("recognises nothing else: another storage's spawner, a word in a task's argv, an editor, a shell", () => {
    const others = [
      spawnerArgv(["/opt/outlive/outlive", SPAWNER_MODE], { ...flags, socket: "/other/spawner.sock" }),
      ["/opt/outlive/outlive", "run", "--", "x", SPAWNER_MODE, "--socket", socket],
      ["/opt/outlive/outlive", "run", SPAWNER_MODE, "--socket", socket],
      ["sh", "-c", `outlive ${SPAWNER_MODE} --socket ${socket}`],
      ["vim", "/p/lib/spawner/spawner-main.ts"],
      ["node", "/p/spawner-main.js.bak", "--socket", socket],
      ["node", "/p/not-spawner-main.js", "--socket", socket],
      ["--socket", socket],
      ["/opt/outlive/outlive", SPAWNER_MODE, "--socket"],
      [],
    ];
    for (const argv of others) expect(isSpawnerCommandLine(argv, socket), argv.join(" ")).toBe(false);
  });
});
