import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { unfinishedGroupMembers } from "../support/group.ts";
import { cleanupShims, codeOf, running, shimUnderTest, startShim, waitForChild, waitForText } from "../support/shim-task.ts";
import { waitFor } from "../support/wait.ts";
import { fakeSystemBus } from "../support/fake-system-bus.ts";
import { fakeSystemctl } from "../support/fake-systemctl.ts";

// The deadline, the kill ladder's group TERM and the other signals a task's group may be sent.
const shim = shimUnderTest();
if (!shim.path) console.log(`test/shim/signals.test.ts skipped: ${shim.reason}`);
const SHIM = shim.path!;

/** bash, which runs its EXIT trap when TERM ends it (dash does not); `ready` once the trap is set (then wait for its sleep: waitForChild). */
const WITH_EXIT_TRAP = ["bash", "-c", 'trap "echo exit-trap-ran" EXIT; echo ready; sleep 120 & wait'];

describe.skipIf(!shim.path)("outlive-shim and signals", () => {
  afterEach(cleanupShims);

  it("at the deadline: marks io/timed-out, TERMs the group (the EXIT trap runs), records 143, and KILLs the group after the grace", async () => {
    const deadlineMs = 1500;
    const graceMs = 1500;
    const run = startShim(SHIM, { settings: { command: { argv: WITH_EXIT_TRAP }, deadlineMs, graceMs } });
    await waitForText(run, "stdout", "ready");
    await waitForChild(run, "sleep");
    expect(await codeOf(run, 30_000)).toBe(143);
    expect(run.read("stdout")).toBe("ready\nexit-trap-ran\n");
    expect(run.has("timed-out")).toBe(true);
    expect(run.has("timed-out.reserved")).toBe(false);
    expect(run.has("ended")).toBe(true);
    // Never early: the mark's time is at least the deadline after the spawn (file times are coarse by a tick).
    const timedOutAt = statSync(`${run.io}/timed-out`).mtimeMs;
    expect(timedOutAt).toBeGreaterThanOrEqual(run.startedAt + deadlineMs - 10);
    // The command ended within the grace, yet the shim stays to KILL the group at its end, itself with it.
    expect(running(run.pid)).toBe(true);
    const end = await run.exited;
    expect(end.signal).toBe("SIGKILL");
    expect(end.at).toBeGreaterThanOrEqual(timedOutAt + graceMs - 10);
    await waitFor("the group to be gone", () => unfinishedGroupMembers(run.pid).length === 0);
  });

  it("KILLs a command that outlives the grace (TERM came first), the shim with it", async () => {
    const graceMs = 1000;
    const script = 'trap "echo got-term" TERM; echo ready; while :; do sleep 120 & wait; done';
    const run = startShim(SHIM, { settings: { command: { argv: ["bash", "-c", script] }, deadlineMs: 1000, graceMs } });
    await waitForText(run, "stdout", "ready");
    await waitForChild(run, "sleep");
    await waitForText(run, "stdout", "got-term");
    const end = await run.exited;
    expect(end.signal).toBe("SIGKILL");
    expect(end.at - statSync(`${run.io}/timed-out`).mtimeMs).toBeGreaterThanOrEqual(graceMs - 10);
    await waitFor("the group to be gone", () => unfinishedGroupMembers(run.pid).length === 0);
    // Killed with the command, the shim had no end to record.
    expect(run.exitBytes()).toBe("    ");
  });

  it("records the kill ladder's group TERM: the EXIT trap runs, 143, and no host-stopping (the host is not stopping)", async () => {
    const run = startShim(SHIM, { settings: { command: { argv: WITH_EXIT_TRAP } } });
    await waitForText(run, "stdout", "ready");
    await waitForChild(run, "sleep");
    process.kill(-run.pid, "SIGTERM");
    expect(await codeOf(run)).toBe(143);
    expect(run.read("stdout")).toBe("ready\nexit-trap-ran\n");
    expect((await run.exited).code).toBe(143);
    expect(run.has("ended")).toBe(true);
    expect(run.has("host-stopping")).toBe(false);
    expect(run.has("timed-out")).toBe(false);
  });

  it("makes io/host-stopping when, after a TERM from outside, systemctl says the host is stopping; asked at the TERM, a slow one is heard while the command ends, a silent one is given until 4 s after it", async () => {
    const bin = mkdtempSync(join(tmpdir(), "outlive-shim-bin-"));
    try {
      const fake = (dir: string, body: string) => fakeSystemctl(join(bin, dir), `[ "$*" = is-system-running ] || exit 2\n${body}`);
      // No system bus (systemBus: null), so systemctl alone is asked, whatever bus this machine has; and
      // asked as on a host that systemd runs (hostSystemd), whatever runs this one.
      const stopping = startShim(SHIM, { settings: { command: { argv: WITH_EXIT_TRAP }, systemBus: null, hostSystemd: true }, env: fake("stopping", "echo stopping") });
      const silent = startShim(SHIM, { settings: { command: { argv: WITH_EXIT_TRAP }, systemBus: null, hostSystemd: true }, env: fake("silent", "exec sleep 60") });
      // A machine slow at its shutdown: the answer takes 3.2 s, and the command 1 s to end after its TERM. Asked
      // only once the command had ended, and given 3 s then, the answer came too late (a TCG guest in CI).
      const slow = startShim(SHIM, {
        settings: { command: { argv: ["bash", "-c", "trap 'sleep 1; exit 143' TERM; sleep 60 & wait"] }, systemBus: null, hostSystemd: true },
        env: fake("slow", "sleep 3.2; echo stopping"),
      });
      await waitForChild(stopping, "sleep");
      await waitForChild(silent, "sleep");
      await waitForChild(slow, "sleep");
      process.kill(-stopping.pid, "SIGTERM");
      const termAt = Date.now();
      process.kill(-silent.pid, "SIGTERM");
      process.kill(-slow.pid, "SIGTERM");
      expect(await codeOf(slow)).toBe(143);
      expect(slow.has("host-stopping")).toBe(true);
      expect(await codeOf(stopping)).toBe(143);
      expect(stopping.has("host-stopping")).toBe(true);
      expect(await codeOf(silent)).toBe(143);
      expect(silent.has("host-stopping")).toBe(false);
      expect(silent.read("host-unanswered")).toBe("no answer within 4000 ms of the TERM\n");
      expect(stopping.has("host-unanswered")).toBe(false);
      const waited = (await silent.exited).at - termAt;
      expect(waited).toBeGreaterThanOrEqual(3900);
      expect(waited).toBeLessThan(15_000);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it("asks nothing at the supervisor's own kill (io/kill-asked made before its TERM), on a host systemd runs and however slow systemctl would be", async () => {
    const bin = mkdtempSync(join(tmpdir(), "outlive-shim-bin-"));
    const asked = join(bin, "asked");
    try {
      const env = fakeSystemctl(bin, "sleep 3\necho stopping", asked);
      const killed = startShim(SHIM, { settings: { command: { argv: WITH_EXIT_TRAP }, systemBus: null, hostSystemd: true }, env });
      await waitForChild(killed, "sleep");
      writeFileSync(join(killed.io, "kill-asked"), "");
      process.kill(-killed.pid, "SIGTERM");
      expect(await codeOf(killed)).toBe(143);
      expect(killed.has("host-stopping")).toBe(false);
      expect(existsSync(asked), "systemctl was run").toBe(false);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it("asks the system bus itself first (no exec): a bus that says stopping makes io/host-stopping though systemctl would say running, and one that says running does not", async () => {
    const bin = mkdtempSync(join(tmpdir(), "outlive-shim-bin-"));
    const stoppingBus = await fakeSystemBus("stopping");
    const runningBus = await fakeSystemBus("running");
    try {
      const env = fakeSystemctl(bin, "echo running");
      const stopping = startShim(SHIM, { settings: { command: { argv: WITH_EXIT_TRAP }, systemBus: stoppingBus.path, hostSystemd: true }, env });
      const running = startShim(SHIM, { settings: { command: { argv: WITH_EXIT_TRAP }, systemBus: runningBus.path, hostSystemd: true }, env });
      await waitForChild(stopping, "sleep");
      await waitForChild(running, "sleep");
      process.kill(-stopping.pid, "SIGTERM");
      process.kill(-running.pid, "SIGTERM");
      expect(await codeOf(stopping)).toBe(143);
      expect(await codeOf(running)).toBe(143);
      expect(stopping.has("host-stopping")).toBe(true);
      expect(running.has("host-stopping")).toBe(false);
      expect(stoppingBus.asked).toEqual(["Hello", "Get"]);
      expect(runningBus.asked).toEqual(["Hello", "Get"]);
    } finally {
      await stoppingBus.close();
      await runningBus.close();
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it("gives the system bus all the time there is (a machine busy at its shutdown): a Get answered after 3 s is heard, and systemctl, which asks the same bus, is not run", async () => {
    const bin = mkdtempSync(join(tmpdir(), "outlive-shim-bin-"));
    const asked = join(bin, "asked");
    const slowBus = await fakeSystemBus("stopping", 3000);
    try {
      const env = fakeSystemctl(bin, "echo running", asked);
      const run = startShim(SHIM, { settings: { command: { argv: WITH_EXIT_TRAP }, systemBus: slowBus.path, hostSystemd: true }, env });
      await waitForChild(run, "sleep");
      const termAt = Date.now();
      process.kill(-run.pid, "SIGTERM");
      expect(await codeOf(run)).toBe(143);
      expect(run.has("host-stopping")).toBe(true);
      expect(run.has("host-unanswered")).toBe(false);
      // The code waited for the answer, and the answer for the bus: no sooner than the bus's 3 s.
      expect((await run.exited).at - termAt).toBeGreaterThanOrEqual(2900);
      expect(slowBus.asked).toEqual(["Hello", "Get"]);
      expect(existsSync(asked), "systemctl was run").toBe(false);
    } finally {
      await slowBus.close();
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it("waits host_ask_ms for the answer, then writes the code and io/host-unanswered saying so: the question is not taken for a no", async () => {
    const bin = mkdtempSync(join(tmpdir(), "outlive-shim-bin-"));
    const asked = join(bin, "asked");
    const silentBus = await fakeSystemBus("stopping", null);
    try {
      const env = fakeSystemctl(bin, "echo stopping", asked);
      const run = startShim(SHIM, { settings: { command: { argv: WITH_EXIT_TRAP }, systemBus: silentBus.path, hostSystemd: true, hostAskMs: 1500 }, env });
      await waitForChild(run, "sleep");
      const termAt = Date.now();
      process.kill(-run.pid, "SIGTERM");
      expect(await codeOf(run)).toBe(143);
      expect(run.has("host-stopping")).toBe(false);
      expect(run.read("host-unanswered")).toBe("no answer within 1500 ms of the TERM\n");
      expect((await run.exited).at - termAt).toBeGreaterThanOrEqual(1400);
      expect(silentBus.asked).toEqual(["Hello", "Get"]);
      // A bus out of time is not followed by systemctl (it would say stopping here): it asks the same bus.
      expect(existsSync(asked), "systemctl was run").toBe(false);
    } finally {
      await silentBus.close();
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it("asks nothing where systemd does not run the host: a TERM from outside is recorded without systemctl, however slow it would be", async () => {
    const bin = mkdtempSync(join(tmpdir(), "outlive-shim-bin-"));
    const asked = join(bin, "asked");
    try {
      // A systemctl that would say stopping, and leaves a trace of every time it is run.
      const env = fakeSystemctl(bin, "sleep 3\necho stopping", asked);
      const told = startShim(SHIM, { settings: { command: { argv: WITH_EXIT_TRAP }, systemBus: null, hostSystemd: false }, env });
      // Left to look for itself: on this machine /run/systemd/system says whether systemd runs it.
      const looked = startShim(SHIM, { settings: { command: { argv: WITH_EXIT_TRAP }, systemBus: null }, env });
      await waitForChild(told, "sleep");
      await waitForChild(looked, "sleep");
      process.kill(-told.pid, "SIGTERM");
      process.kill(-looked.pid, "SIGTERM");
      expect(await codeOf(told)).toBe(143);
      expect(told.has("host-stopping")).toBe(false);
      expect(await codeOf(looked)).toBe(143);
      if (existsSync("/run/systemd/system")) {
        console.log("signals.test.ts: systemd runs this host, so the shim that looked asked, as it should");
        expect(looked.has("host-stopping")).toBe(true);
        expect(readFileSync(asked, "utf8").trim().split("\n")).toHaveLength(1);
      } else {
        expect(looked.has("host-stopping")).toBe(false);
        expect(existsSync(asked), "systemctl was run").toBe(false);
      }
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it("is not ended by HUP, INT, QUIT, USR1, USR2, PIPE or ALRM sent to the group: it still records the TERM that follows", async () => {
    const ignored = "HUP INT QUIT USR1 USR2 PIPE ALRM";
    const run = startShim(SHIM, { settings: { command: { argv: ["bash", "-c", `trap "" ${ignored}; echo ready; sleep 120 & wait`] } } });
    await waitForText(run, "stdout", "ready");
    await waitForChild(run, "sleep");
    for (const sig of ignored.split(" ")) process.kill(-run.pid, `SIG${sig}` as NodeJS.Signals);
    // Queued before the TERM: a shim ended by one of them would never write the TERM's 143.
    process.kill(-run.pid, "SIGTERM");
    expect(await codeOf(run)).toBe(143);
    expect((await run.exited).code).toBe(143);
  });

  it("writes the code of a command that a HUP to the group ended (129), having outlived the HUP itself", async () => {
    const run = startShim(SHIM, { settings: { command: { argv: ["bash", "-c", "echo ready; sleep 120 & wait"] } } });
    await waitForText(run, "stdout", "ready");
    await waitForChild(run, "sleep");
    process.kill(-run.pid, "SIGHUP");
    expect(await codeOf(run)).toBe(129);
    expect(run.has("host-stopping")).toBe(false);
  });
});
