import { existsSync, mkdirSync, readFileSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupShims, codeOf, ioFiles, shimUnderTest, startShim } from "../support/shim-task.ts";
import { waitFor } from "../support/wait.ts";

// `enter`: the shim joins the task's cgroup before anything of the user's runs, or runs nothing.
const shim = shimUnderTest();
if (!shim.path) console.log(`test/shim/cgroup.test.ts skipped: ${shim.reason}`);
const SHIM = shim.path!;

/** A writable cgroup v2 root (pure v2, or the hybrid layout's unified tree), or why there is none. */
function v2Root(): { root: string; reason?: undefined } | { root: null; reason: string } {
  if (process.getuid?.() !== 0) return { root: null, reason: "not root: no cgroup of its own can be made" };
  for (const root of ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]) {
    if (existsSync(join(root, "cgroup.procs")) && existsSync(join(root, "cgroup.controllers"))) return { root };
  }
  return { root: null, reason: "no cgroup v2 at /sys/fs/cgroup or /sys/fs/cgroup/unified" };
}
const v2 = v2Root();
if (shim.path && !v2.root) console.log(`test/shim/cgroup.test.ts: joining a cgroup skipped: ${v2.reason}`);

describe.skipIf(!shim.path)("outlive-shim joins the task's cgroup", () => {
  const made: string[] = [];
  afterEach(async () => {
    await cleanupShims();
    for (const dir of made.splice(0)) {
      await waitFor(`${dir} to empty`, () => readFileSync(join(dir, "cgroup.procs"), "utf8") === "");
      rmdirSync(dir);
    }
  });

  it.skipIf(!v2.root)("before the command runs: the shim and its command are in it", async () => {
    const dir = join(v2.root!, `outlive-shim-test-${process.pid}`);
    mkdirSync(dir);
    made.push(dir);
    const run = startShim(SHIM, { settings: { command: { argv: ["sh", "-c", "cat /proc/self/cgroup; cat /proc/$PPID/cgroup"] }, enter: join(dir, "cgroup.procs") } });
    expect(await codeOf(run)).toBe(0);
    const inV2 = run.read("stdout").split("\n").filter((l) => l.startsWith("0::"));
    expect(inV2).toEqual([`0::/outlive-shim-test-${process.pid}`, `0::/outlive-shim-test-${process.pid}`]);
  });

  it("refuses to run anywhere else: a cgroup it cannot join is one line (stderr, io/shim-refused), exit 125, no exit marker, nothing run", async () => {
    const run = startShim(SHIM, {
      settings: { command: { argv: ["sh", "-c", "echo ran"] }, enter: "/sys/fs/cgroup/unified/outlive-no-such-cgroup/cgroup.procs" },
    });
    expect((await run.exited).code).toBe(125);
    expect(run.read("stderr")).toMatch(/^outlive-shim: enter: could not join the task's cgroup through "\/sys\/fs\/cgroup\/unified\/outlive-no-such-cgroup\/cgroup.procs": No such file or directory\n$/);
    expect(run.read("stdout")).toBe("");
    expect(run.exitBytes()).toBe("    ");
    // The same line in io/shim-refused, for the supervisor to end the task never_started with it.
    expect(ioFiles(run)).toEqual(["exit", "shim-refused", "stderr", "stdout", "timed-out.reserved"]);
    expect(run.read("shim-refused")).toBe(run.read("stderr"));
  });
});
