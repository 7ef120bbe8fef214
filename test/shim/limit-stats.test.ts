import { readFileSync } from "node:fs";
import { describe, expect, it, afterEach } from "vitest";
import { findCgroup2Mount } from "../../lib/placement/cgroup-fs.ts";
import { cleanupShims, codeOf, shimUnderTest, startShim } from "../support/shim-task.ts";

// limit_stats: as the task ends, the shim copies its own cgroup's counters into io/, where they outlast a scope's
// cgroup. Here the shim's cgroup is this test's (no controllers on a hybrid host): cpu.stat is a core file of every
// cgroup v2 and is copied; pids.events exists only with the pids controller, and is left out when it is missing.
const shim = shimUnderTest();
const mount = findCgroup2Mount();
const why = !shim.path ? shim.reason : mount === null ? "no cgroup v2 mount" : null;
if (why) console.log(`test/shim/limit-stats.test.ts skipped: ${why}`);

describe.skipIf(why !== null)("outlive-shim's limit counters", () => {
  afterEach(cleanupShims);

  it("copies its cgroup's cpu.stat (and pids.events where there is one) into io/ before it marks the end", async () => {
    const own = /^0::(.*)$/m.exec(readFileSync("/proc/self/cgroup", "utf8"))![1];
    const run = startShim(shim.path!, { settings: { command: { argv: ["sh", "-c", "exit 4"] }, limitStats: mount! } });
    expect(await codeOf(run)).toBe(4);
    expect(run.read("cpu.stat")).toMatch(/^usage_usec \d+$/m);
    let pidsEvents: string | null = null;
    try {
      pidsEvents = readFileSync(`${mount}${own}/pids.events`, "utf8");
    } catch {
      // No pids controller here.
    }
    expect(run.has("pids.events")).toBe(pidsEvents !== null);
    expect(run.has("ended")).toBe(true);
  });

  it("without limit_stats copies nothing", async () => {
    const run = startShim(shim.path!, { settings: { command: { argv: ["true"] } } });
    expect(await codeOf(run)).toBe(0);
    expect(run.has("cpu.stat")).toBe(false);
  });
});
