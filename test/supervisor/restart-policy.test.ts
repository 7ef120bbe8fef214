import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Supervisor, type TaskRecord } from "../../lib/mod.ts";
import { tempDir } from "../support/cli.ts";
import { ServeChild } from "../support/serve-child.ts";
import { waitFor } from "../support/wait.ts";
import { defaultProgram } from "../support/task-program.ts";

// The policy is outlive-shim's: where tasks run under the shell wrapper (OUTLIVE_SHIM=none, npm test's second run
// of the core suites, or no shim built) only its refusal is tested here.
const UNDER_SHIM = defaultProgram() === "shim";
if (!UNDER_SHIM) console.log("test/supervisor/restart-policy: the policy's own cases skipped: tasks run under the shell wrapper here");
const itUnderShim = it.skipIf(!UNDER_SHIM);

// A restart policy, carried out by the task's outlive-shim: no supervisor needed while it runs.
const { dir: storage, remove } = tempDir("outlive-restart-policy-");
let sup: Supervisor | null = null;
const serves: ServeChild[] = [];
afterEach(async () => {
  await sup?.stopAll().catch(() => {});
  await sup?.close();
  sup = null;
});
afterAll(async () => {
  for (const s of serves) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGKILL");
  remove();
});
const open = async (o = {}) => (sup = await Supervisor.open({ storage, mode: "standalone", log: () => {}, ...o }));
const attempts = (id: string) => readFileSync(join(storage, "tasks", id, "io", "attempts"), "utf8").trim().split("\n").map((l) => JSON.parse(l));

/** Each restart's delay: from an attempt's end to the next one's start. */
function delays(id: string): number[] {
  const lines = attempts(id);
  const out: number[] = [];
  for (let i = 1; i + 1 < lines.length; i += 2) out.push(lines[i + 1].at - lines[i].at);
  return out;
}

/** Never early, and within 10% (or 100 ms on a loaded machine, as test/shim/restart.test.ts allows). */
function onTime(got: number[], want: number[]): void {
  expect(got).toHaveLength(want.length);
  got.forEach((ms, i) => {
    expect(ms).toBeGreaterThanOrEqual(want[i] - 1);
    expect(ms).toBeLessThanOrEqual(Math.max(want[i] * 1.1, want[i] + 100));
  });
}

describe("a restart policy", () => {
  itUnderShim("restarts a task that exits 1 at once with the backoff's delays, gives up at the limit, and completes once with the last attempt's end", async () => {
    const s = await open();
    const subscription = s.subscribeCompletions();
    const heard: TaskRecord[] = [];
    void (async () => {
      for await (const r of subscription) heard.push(r);
    })();
    const task = await s.run({ shell: "echo try; exit 1", restart: "on-failure", restartMax: 3, restartDelaySeconds: 0.2, restartDelayMaxSeconds: 0.5 });
    expect(task).toMatchObject({ state: "running", restarts: 0, restart: { when: "on-failure", max: 3, delayMs: 200, delayMaxMs: 500 } });
    const done = await s.wait(task.id);
    expect(done).toMatchObject({ state: "exited", exitCode: 1, restarts: 3, reason: "exited with code 1" });
    expect(done.outputTail).toContain("try\ntry\ntry\ntry");
    onTime(delays(task.id), [200, 400, 500]);
    await waitFor("the completion", () => heard.length > 0);
    // Nothing more comes: one end, one completion.
    await new Promise((r) => setTimeout(r, 300));
    expect(heard.map((r) => r.id)).toEqual([task.id]);
    subscription.close();
  });

  itUnderShim("is running while it waits out a delay, with its restarts and its new command pid; a kill ends the policy", async () => {
    const s = await open();
    const task = await s.run({ shell: "exit 2", restart: "always", restartMax: 5, restartDelaySeconds: 0.1, restartDelayMaxSeconds: 30 });
    await waitFor("two restarts noted in the record", () => (s.get(task.id).restarts ?? 0) >= 2, 20_000);
    expect(s.get(task.id).state).toBe("running");
    const pids = attempts(task.id).filter((a) => a.event === "start").map((a) => a.pid);
    await waitFor("the newest attempt's pid in the record", () => pids.includes(s.get(task.id).commandPid!));
    const killed = await s.kill(task.id);
    expect(killed.record.state).toBe("killed");
    const count = attempts(task.id).length;
    await new Promise((r) => setTimeout(r, 500));
    expect(attempts(task.id).length).toBe(count);
  });

  itUnderShim("on-failure ends with the first attempt that succeeds", async () => {
    const s = await open();
    const marker = join(storage, "flaky-count");
    const task = await s.run({ shell: `n=$(cat ${marker} 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${marker}; [ $n -ge 3 ]`, restart: "on-failure", restartMax: 5, restartDelaySeconds: 0.05 });
    expect(await s.wait(task.id)).toMatchObject({ state: "exited", exitCode: 0, restarts: 2 });
  });

  it("is refused with the reason under the shell wrapper, and nothing is stored", async () => {
    const s = await open({ shimPath: false });
    const before = existsSync(join(storage, "tasks")) ? readdirSync(join(storage, "tasks")).length : 0;
    const error = await s.run({ argv: ["true"], restart: "always" }).catch((e) => e);
    expect(error.code).toBe("E_RESTART_UNSUPPORTED");
    expect(error.message).toMatch(/tasks run under the shell wrapper .* the policy is carried out by outlive-shim/);
    expect(readdirSync(join(storage, "tasks")).length).toBe(before);
  });

  itUnderShim("keeps to its policy across a SIGKILLed supervisor: the next one adopts it running and hears its one end", async () => {
    const serve = new ServeChild(["--stdio", "--storage", storage, "--mode", "standalone"]);
    serves.push(serve);
    await serve.request("initialize", { protocolVersion: "1" });
    const task = await serve.request<TaskRecord>("run", { shell: "exit 1", restart: "on-failure", restartMax: 4, restartDelaySeconds: 0.3, restartDelayMaxSeconds: 0.6 });
    await waitFor("the first attempt's end", () => attempts(task.id).some((a) => a.event === "end"));
    serve.child.kill("SIGKILL");
    await serve.exited;
    const s = await open();
    expect(s.replayReport.adopted).toContain(task.id);
    const subscription = s.subscribeCompletions();
    const heard: string[] = [];
    void (async () => {
      for await (const r of subscription) heard.push(r.id);
    })();
    expect(await s.wait(task.id)).toMatchObject({ state: "exited", exitCode: 1, restarts: 4 });
    onTime(delays(task.id), [300, 600, 600, 600]);
    await waitFor("its completion", () => heard.includes(task.id));
    await new Promise((r) => setTimeout(r, 300));
    expect(heard.filter((id) => id === task.id)).toHaveLength(1);
    subscription.close();
  });
});
