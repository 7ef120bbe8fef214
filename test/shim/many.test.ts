import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, writeSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { allocated, cleanupShims, codeOf, type ShimRun, shimUnderTest, startShim } from "../support/shim-task.ts";
import { waitFor } from "../support/wait.ts";

// 200 tasks at once with inotify asked for: past fs.inotify.max_user_instances (128 here) the rest fall back
// to polling. Both keep the bound, and no task fails for it.
const shim = shimUnderTest();
if (!shim.path) console.log(`test/shim/many.test.ts skipped: ${shim.reason}`);
const SHIM = shim.path!;
const TASKS = 200;
const MAX = 4096;

/** Whether the shim holds an inotify instance (else it polls on a timer). */
function watchesWithInotify(pid: number): boolean {
  return readdirSync(`/proc/${pid}/fd`).some((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`) === "anon_inode:inotify";
    } catch {
      return false;
    }
  });
}

describe.skipIf(!shim.path)("200 shims at once", () => {
  const scratch = mkdtempSync(join(tmpdir(), "outlive-shim-many-"));
  afterEach(cleanupShims);
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("all keep their output bound and end well, whether on inotify or polling", async () => {
    const gate = join(scratch, "gate");
    execFileSync("mkfifo", [gate]);
    // Each writes 50,000 bytes, waits at the gate (so all are alive at once), then writes 50,000 more.
    const script = `printf '%050000d' 0; read line < '${gate}'; printf '%050000d' 1`;
    const runs: ShimRun[] = [];
    for (let i = 0; i < TASKS; i++) runs.push(startShim(SHIM, { settings: { command: { argv: ["sh", "-c", script] }, maxOutput: MAX, watch: "inotify" } }));
    await waitFor("every shim's first cut (stdout.dropped)", () => runs.every((r) => r.read("stdout.dropped") !== ""), 120_000, 200);
    // Quiet at the gate, each takes its instance (where one is left) once its timer has backed off (1.5 s).
    const cut = Date.now();
    await waitFor("the back-off", () => Date.now() - cut > 2500, 10_000, 100);
    const onInotify = runs.filter((r) => watchesWithInotify(r.pid)).length;
    const limit = Number(readFileSync("/proc/sys/fs/inotify/max_user_instances", "utf8"));
    console.log(`${TASKS} shims: ${onInotify} on inotify, ${TASKS - onInotify} polling (max_user_instances ${limit})`);
    expect(TASKS - onInotify).toBeGreaterThanOrEqual(TASKS - limit);
    expect(onInotify).toBeGreaterThan(0);
    for (const r of runs) expect(allocated(join(r.io, "stdout"))).toBeLessThanOrEqual(MAX + 3 * 4096);

    // Open the gate: one line for each reader, held open until all have read theirs.
    const fd = openSync(gate, "r+");
    try {
      writeSync(fd, "go\n".repeat(TASKS));
      await waitFor("every task's end", () => runs.every((r) => r.marker().kind === "code"), 120_000, 200);
    } finally {
      closeSync(fd);
    }
    for (const r of runs) {
      expect(await codeOf(r)).toBe(0);
      expect(r.read("stderr")).toBe("");
      const out = join(r.io, "stdout");
      expect(allocated(out)).toBeLessThanOrEqual(MAX + 3 * 4096);
      const dropped = Number(r.read("stdout.dropped"));
      expect(dropped).toBe(Math.floor((100_000 - MAX) / 4096) * 4096);
      expect(readFileSync(out).subarray(dropped).toString("latin1")).toBe("0".repeat(50_000 - 1).concat("1").slice(-(100_000 - dropped)));
    }
  }, 300_000);
});
