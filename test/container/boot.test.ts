import { existsSync, rmSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { isSameProcess } from "../../lib/proc/identity.ts";
import { mountsUnder } from "../../harness/host/container/host-checks/mounts.ts";
import { bootContainer, cannotRunHereReason, ContainerError, type ContainerHandle, type TeardownReport } from "../../harness/host/container/mod.ts";
import type { NspawnMachine } from "../../harness/host/container/engine/nspawn/nspawn.ts";

// A real bookworm container: skipped, with the reason printed, where root, nspawn or debootstrap are missing.
const missing = await cannotRunHereReason();
if (missing) console.log(`test/container: skipping real-container tests: ${missing}`);

describe.skipIf(missing !== null)("a bookworm container booted with nspawn", () => {
  let container: ContainerHandle | undefined;
  let bootSkip: string | null = null;

  beforeAll(async () => {
    try {
      container = await bootContainer({ suite: "bookworm", engine: "nspawn" });
    } catch (error) {
      // No network for debootstrap, a container that will not boot: the machine's fault, not the code's.
      if (error instanceof ContainerError && error.cannotRunHere) {
        bootSkip = error.message;
        console.log(`test/container: skipping: ${bootSkip}`);
        return;
      }
      throw error;
    }
  }, 20 * 60_000);

  afterAll(async () => {
    if (container && (await container.machine.isAlive())) await container.teardown();
  });

  function booted(ctx: TestContext): ContainerHandle {
    if (!container) ctx.skip();
    return container!;
  }

  it("runs systemd as PID 1 with the lingering user's manager active", async (ctx) => {
    const c = booted(ctx);
    expect(["running", "degraded"]).toContain(c.info.readiness.systemState);
    expect(c.info.readiness.systemdVersion).toBe(252);
    const comm = await c.exec(["cat", "/proc/1/comm"]);
    expect(comm.stdout.trim()).toBe("systemd");
    const user = await c.exec(["systemctl", "is-active", `user@${c.info.uid}.service`]);
    expect(user.stdout.trim()).toBe("active");
    const node = await c.exec(["node", "-e", "console.log(process.versions.node)"], { user: true });
    expect(Number(node.stdout.split(".")[0])).toBeGreaterThanOrEqual(20);
  });

  it("passes exit codes, stdout and stderr through, and bounds a command that hangs", async (ctx) => {
    const c = booted(ctx);
    const r = await c.shell("echo out; echo err >&2; exit 7", { user: true });
    expect(r).toMatchObject({ exitCode: 7, stdout: "out\n", stderr: "err\n" });
    const who = await c.exec(["id", "-un"], { user: true });
    expect(who.stdout.trim()).toBe(c.info.user);
    await expect(c.exec(["sleep", "30"], { timeoutMs: 1_000 })).rejects.toMatchObject({ code: "exec-timeout" });
  });

  it("puts `systemd-run --user --scope` in its scope, and cgroup.kill on the scope ends it", async (ctx) => {
    const c = booted(ctx);
    const unit = await c.start(
      "launch-x",
      ["systemd-run", "--user", "--scope", "--unit=x-task-1", "--slice=x.slice", "sleep", "30"],
      { user: true },
    );
    expect(unit).toBe("launch-x.service");
    // The scope's directory under the cgroup v2 mount, wherever the layout puts it.
    const locate = [
      "for i in $(seq 100); do",
      "  cg=$(systemctl --user show -P ControlGroup x-task-1.scope 2>/dev/null)",
      '  [ -n "$cg" ] && break; sleep 0.1',
      "done",
      'echo "$(findmnt -n -t cgroup2 -o TARGET | head -n1)$cg"',
    ].join("\n");
    const dir = (await c.shell(locate, { user: true, timeoutMs: 15_000 })).stdout.trim();
    expect(dir).toMatch(/\/user\.slice\/user-1000\.slice\/user@1000\.service\/x\.slice\/x-task-1\.scope$/);
    const procs = await c.shell(`cat ${dir}/cgroup.procs | while read p; do cat /proc/$p/comm; done`, { user: true });
    expect(procs.stdout.trim().split("\n")).toEqual(["sleep"]);

    const kill = await c.shell(
      [
        `echo 1 > ${dir}/cgroup.kill`,
        "for i in $(seq 100); do systemctl --user is-active --quiet x-task-1.scope || exit 0; sleep 0.1; done",
        "exit 1",
      ].join("\n"),
      { user: true, timeoutMs: 15_000 },
    );
    expect(kill.exitCode).toBe(0);
    expect((await c.exec(["test", "-d", dir])).exitCode).not.toBe(0);
  });

  it("starts a long-lived service in the user's manager and finds its journal", async (ctx) => {
    const c = booted(ctx);
    const unit = await c.start("module-1", ["sh", "-c", "echo module-up; exec sleep 60"], { manager: "user" });
    const cgroup = await c.shell(
      "for i in $(seq 50); do p=$(systemctl --user show -P MainPID module-1.service); [ \"$p\" != 0 ] && break; sleep 0.1; done; grep '^0::' /proc/$p/cgroup",
      { user: true, timeoutMs: 10_000 },
    );
    expect(cgroup.stdout.trim()).toBe("0::/user.slice/user-1000.slice/user@1000.service/app.slice/module-1.service");
    expect(await c.journal({ unit, user: true })).toContain("module-up");
    await c.exec(["systemctl", "--user", "stop", unit], { user: true });
  });

  it("keeps the journal on request", async (ctx) => {
    const c = booted(ctx);
    expect(await c.journal({ unit: "launch-x.service" })).toContain("launch-x");
    const kept = await c.keepJournal();
    expect(existsSync(kept)).toBe(true);
    rmSync(kept);
  });

  it("tears down leaving no nspawn process, no mounts and no cgroups on the host", async (ctx) => {
    const c = booted(ctx);
    const state = (c.machine as NspawnMachine).state;
    const report: TeardownReport = await c.teardown();
    expect(report).toMatchObject({ clean: true, leftovers: [] });
    if (report.stopped !== "halted") {
      // The halt is asked with a bound (15 s); on a machine busier than its cores (a loaded CI step, a shared
      // runner) systemd's own shutdown has been seen to overrun it, and teardown then kills what is left. That
      // is accepted only with the evidence: the halt was asked, its bound ran out, and the load over that minute
      // was at least the machine's cores. On an idle machine a halt that needs the kill still fails here.
      const load = loadavg()[0];
      const why = `teardown ${report.stopped} after ${report.ms} ms, halt ${JSON.stringify(report.halt)}, load ${load.toFixed(2)} on ${cpus().length} cores`;
      expect(report.stopped, why).toBe("killed");
      expect(report.halt, why).toBeDefined();
      expect(report.ms, why).toBeGreaterThanOrEqual(report.halt!.boundMs);
      expect(load, why).toBeGreaterThanOrEqual(cpus().length);
      console.log(`test/container: a slow halt, accepted: ${why}`);
    }
    expect(isSameProcess(state.nspawn)).toBe(false);
    expect(state.pid1 && isSameProcess(state.pid1)).toBe(false);
    for (const dir of state.cgroupDirs) expect(existsSync(dir)).toBe(false);
    expect(mountsUnder(state.rootfs)).toEqual([]);
    expect(mountsUnder(state.runDir)).toEqual([]);
    console.log(`test/container: boot-to-running ${c.info.readiness.ms} ms, teardown ${report.ms} ms`);
  });
});
