import { spawn } from "node:child_process";
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isSameProcess } from "../../lib/proc/identity.ts";
import { bootContainer, ENGINES, resolveOptions } from "../../harness/host/container/mod.ts";
import { mountsUnder } from "../../harness/host/container/host-checks/mounts.ts";
import { engineMissing } from "../../harness/host/container/host-checks/preflight.ts";
import { projectRoot } from "../../harness/shared/project-root.ts";
import type { VmMachine } from "../../harness/host/container/engine/vm/vm.ts";

const vmMissing = await engineMissing("vm");
if (vmMissing) console.log(`test/container/vm-teardown: skipping: ${vmMissing}`);

/** Every process whose command line names this run's directory (qemu's overlay and sockets are in it). */
function processesNaming(dir: string): number[] {
  return readdirSync("/proc").filter((p) => /^\d+$/.test(p)).filter((p) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(dir);
    } catch {
      return false;
    }
  }).map(Number);
}

describe.skipIf(vmMissing !== null)("--engine vm: real boots under qemu", () => {
  it("boots bookworm with systemd as PID 1 and every cgroup v2 controller, the host's folders shared as they should be; teardown leaves no qemu, overlay, socket or mount", async () => {
    const c = await bootContainer({ suite: "bookworm", engine: "vm" }, () => {});
    const state = (c.machine as VmMachine).state;
    // As run-in.ts does for a scenario's run/: made on the host, handed to the test user.
    const probeDir = join(projectRoot(), "harness", "reports", `vm-teardown-${process.pid}`);
    mkdirSync(probeDir, { recursive: true });
    chownSync(probeDir, 1000, 1000);
    const probeFile = join(probeDir, "from-guest.txt");
    try {
      expect(c.info.readiness.systemdVersion).toBe(252);
      expect(isSameProcess(state.qemu)).toBe(true);
      expect((await c.exec(["cat", "/proc/1/comm"])).stdout.trim()).toBe("systemd");
      // The guest's own kernel: pure v2 with the memory controller the host binds to v1.
      expect((await c.exec(["cat", "/sys/fs/cgroup/cgroup.controllers"])).stdout).toMatch(/\bmemory\b/);
      // No network device: only loopback.
      expect((await c.exec(["ls", "/sys/class/net"])).stdout.trim()).toBe("lo");
      // The monitor's socket is in a directory only root can enter.
      expect(statSync(state.paths.sockets).mode & 0o777).toBe(0o700);
      expect((await c.exec(["node", "-e", "console.log(process.version)"], { user: true })).stdout.trim()).toBe(process.version);
      // The project is read-only; its reports folder is written by the user, and the host sees it.
      const ro = await c.shell("touch /work/project/vm-write-test", { user: true });
      expect(ro.exitCode).not.toBe(0);
      const inside = `/work/project/harness/reports/vm-teardown-${process.pid}/from-guest.txt`;
      expect((await c.shell(`echo from-the-guest > ${inside} && stat -c %u ${inside}`, { user: true })).stdout.trim()).toBe("1000");
      expect(readFileSync(probeFile, "utf8")).toBe("from-the-guest\n");
      // mapped-xattr: on the host the file is qemu's (root's), not a uid the guest chose.
      expect(statSync(probeFile).uid).toBe(0);
    } finally {
      rmSync(probeDir, { recursive: true, force: true });
      const down = await c.teardown();
      expect(down.leftovers).toEqual([]);
      expect(down.stopped).toBe("halted");
    }
    expect(isSameProcess(state.qemu)).toBe(false);
    expect(processesNaming(state.runDir)).toEqual([]);
    expect(existsSync(state.paths.overlay)).toBe(false);
    expect(existsSync(state.paths.sockets)).toBe(false);
    expect(existsSync(state.runDir)).toBe(false);
    expect(mountsUnder(state.runDir)).toEqual([]);
  }, 10 * 60_000);

  it("a qemu that does not answer QMP quit is killed, and still nothing is left", async () => {
    const options = resolveOptions({ suite: "bookworm", engine: "vm" }); // the same image as above: one guest image to build on a fresh machine
    const { machine } = await ENGINES.vm.boot(options, () => {});
    const state = (machine as VmMachine).state;
    process.kill(state.qemu.pid, "SIGSTOP"); // a hung qemu: its monitor takes the connection and never answers
    const down = await machine.stop(2_000);
    expect(down).toMatchObject({ stopped: "killed", leftovers: [], clean: true });
    expect(isSameProcess(state.qemu)).toBe(false);
    expect(processesNaming(state.runDir)).toEqual([]);
    expect(existsSync(state.runDir)).toBe(false);
  }, 10 * 60_000);

  it("a scenario run that gets SIGTERM while its machine still boots ends that machine too (its handle did not exist yet)", async () => {
    const runs = join(resolveOptions({ engine: "vm" }).cacheDir, "runs");
    const before = new Set(existsSync(runs) ? readdirSync(runs) : []);
    // The CLI in a process of its own, as a person (or CI's timeout) would end it.
    const child = spawn(process.execPath, [join(projectRoot(), "dist", "harness", "run-scenarios.js"), "restart-adopt", "--engine", "vm", "--systemd", "252"], { stdio: "ignore" });
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    // Its machine appears with qemu's pid in its state well before the guest answers (a boot takes tens of seconds).
    let qemu: { pid: number; startTime: string } | null = null;
    let runDir = "";
    for (const end = Date.now() + 120_000; Date.now() < end && qemu === null;) {
      for (const name of existsSync(runs) ? readdirSync(runs) : []) {
        if (before.has(name) || !name.includes(`-${child.pid}-`)) continue;
        try {
          const st = JSON.parse(readFileSync(join(runs, name, "state.json"), "utf8")) as { qemu: { pid: number; startTime: string } };
          if (st.qemu.pid > 0) [qemu, runDir] = [st.qemu, join(runs, name)];
        } catch {
          // not written yet
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(qemu).not.toBeNull();
    expect(isSameProcess(qemu!)).toBe(true);
    child.kill("SIGTERM");
    expect(await exited).toBe(130);
    expect(isSameProcess(qemu!)).toBe(false);
    expect(processesNaming(runDir)).toEqual([]);
    expect(existsSync(join(runDir, "overlay.qcow2"))).toBe(false);
    expect(existsSync(join(runDir, "sockets"))).toBe(false);
  }, 10 * 60_000);
});
