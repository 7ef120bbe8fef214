import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupShims, codeOf, type ShimRun, shimUnderTest, startShim, waitForChild } from "../support/shim-task.ts";
import { waitFor } from "../support/wait.ts";

// The restart policy: attempts, delays doubling to the cap, at most max restarts, io/attempts, one end.
const shim = shimUnderTest();
if (!shim.path) console.log(`test/shim/restart.test.ts skipped: ${shim.reason}`);
const SHIM = shim.path!;

type Attempt =
  | { attempt: number; event: "start"; at: number; pid: number; stdout: number; stderr: number }
  | { attempt: number; event: "end"; at: number; code: number };

function attempts(run: ShimRun): Attempt[] {
  return run.read("attempts").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Attempt);
}

describe.skipIf(!shim.path)("outlive-shim's restart policy", () => {
  afterEach(cleanupShims);

  it("restarts a failing command with delays 200, 400, 800 ms, at most 3 times, and records one end with its code", async () => {
    const run = startShim(SHIM, {
      settings: { command: { argv: ["sh", "-c", "echo attempt; echo oops >&2; exit 1"] }, restart: { when: "on-failure", max: 3, delayMs: 200, delayMaxMs: 800 } },
    });
    expect(await codeOf(run)).toBe(1);
    expect((await run.exited).code).toBe(1);
    const lines = attempts(run);
    expect(lines.map((a) => `${a.attempt}:${a.event}`)).toEqual(["1:start", "1:end", "2:start", "2:end", "3:start", "3:end", "4:start", "4:end"]);
    const delays: number[] = [];
    for (let i = 1; i + 1 < lines.length; i += 2) delays.push(lines[i + 1].at - lines[i].at);
    console.log(`restart delays: ${delays.join(", ")} ms`);
    // Never early, and within 10%; a shared machine's scheduling once added 86 ms (load 5.5 on 2 cores), so 100 ms at least.
    [200, 400, 800].forEach((want, i) => {
      expect(delays[i]).toBeGreaterThanOrEqual(want - 1);
      expect(delays[i]).toBeLessThanOrEqual(Math.max(want * 1.1, want + 100));
    });
    for (const a of lines) if (a.event === "end") expect(a.code).toBe(1);
    // Each start says where its output begins; nothing of the shim's is in the output itself.
    const starts = lines.filter((a): a is Extract<Attempt, { event: "start" }> => a.event === "start");
    expect(starts.map((s) => [s.stdout, s.stderr])).toEqual([[0, 0], [8, 5], [16, 10], [24, 15]]);
    expect(run.read("stdout")).toBe("attempt\n".repeat(4));
    expect(run.read("stderr")).toBe("oops\n".repeat(4));
    // io/command-pid names the last attempt's command.
    expect(run.read("command-pid")).toBe(`${starts[3].pid}\n`);
    expect(new Set(starts.map((s) => s.pid)).size).toBe(4);
    expect(run.has("ended")).toBe(true);
  });

  it("on-failure stops after a success; always restarts after one too", async () => {
    const flaky = (dir: string) => ({
      command: { argv: ["sh", "-c", `n=$(cat ${join(dir, "n")} 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${join(dir, "n")}; [ $n -ge 2 ]`] },
    });
    const onFailure = startShim(SHIM, { settings: (dir) => ({ ...flaky(dir), restart: { when: "on-failure", max: 5, delayMs: 10, delayMaxMs: 10 } }) });
    const always = startShim(SHIM, { settings: { command: { argv: ["true"] }, restart: { when: "always", max: 2, delayMs: 10, delayMaxMs: 20 } } });
    expect(await codeOf(onFailure)).toBe(0);
    expect(attempts(onFailure).map((a) => (a.event === "end" ? a.code : "start"))).toEqual(["start", 1, "start", 0]);
    expect(await codeOf(always)).toBe(0);
    expect(attempts(always).filter((a) => a.event === "start")).toHaveLength(3);
  });

  it("ends the task at once with 143 on a TERM during the delay", async () => {
    const run = startShim(SHIM, { settings: { command: { argv: ["sh", "-c", "exit 1"] }, restart: { when: "always", max: 5, delayMs: 20_000, delayMaxMs: 20_000 } } });
    await waitFor("the first attempt's end", () => attempts(run).some((a) => a.event === "end"));
    const termAt = Date.now();
    process.kill(-run.pid, "SIGTERM");
    expect(await codeOf(run, 10_000)).toBe(143);
    expect((await run.exited).at - termAt).toBeLessThan(10_000);
    expect(attempts(run).map((a) => a.event)).toEqual(["start", "end"]);
    expect(run.has("ended")).toBe(true);
  });

  it("stops restarting once a TERM from outside reached the running command", async () => {
    const run = startShim(SHIM, { settings: { command: { argv: ["bash", "-c", "echo up; sleep 120 & wait"] }, restart: { when: "always", max: 5, delayMs: 10, delayMaxMs: 10 } } });
    await waitForChild(run, "sleep");
    process.kill(-run.pid, "SIGTERM");
    expect(await codeOf(run)).toBe(143);
    expect(attempts(run).map((a) => a.event)).toEqual(["start", "end"]);
  });
});
