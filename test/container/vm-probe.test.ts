import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { findTool } from "../../harness/host/container/host-checks/preconditions.ts";
import { chooseAccel, judgeProbe, probeAccel, probeKernel } from "../../harness/host/container/engine/vm/accel-probe.ts";

const qemu = await findTool("qemu-system-x86_64");
if (qemu === null) console.log("test/container/vm-probe: skipping the real probes: qemu-system-x86_64 is not installed (container/install-deps.sh)");

describe("the vm engine's accelerator probe, as data", () => {
  it("the probe kernel is a flat multiboot image whose header sums to zero", () => {
    const k = probeKernel();
    expect(k.readUInt32LE(0)).toBe(0x1badb002);
    expect((k.readUInt32LE(0) + k.readUInt32LE(4) + k.readUInt32LE(8)) >>> 0).toBe(0);
    expect(k.readUInt32LE(28)).toBe(0x100020); // the entry is the code right after the 32-byte header
  });

  it("names qemu's own complaint, a hang, or nothing when the guest ran", () => {
    const msr = "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69\nqemu-system-x86_64: ../../target/i386/kvm/kvm.c:3183: kvm_buf_set_msrs: Assertion `ret == cpu->kvm_msr_buf->nmsrs' failed.\n";
    expect(judgeProbe({ exitCode: 134, signal: null, stderr: msr, timedOut: false }, 5000)).toBe("failed to set MSR 0x10a to 0x69 (exit 134)");
    expect(judgeProbe({ exitCode: null, signal: "SIGKILL", stderr: "", timedOut: true }, 5000)).toMatch(/did not run one instruction within 5 s \(hung\)/);
    expect(judgeProbe({ exitCode: 85, signal: null, stderr: "", timedOut: false }, 5000)).toBeNull();
  });
});

describe.skipIf(qemu === null)("the vm engine's accelerator probe, booting qemu", () => {
  it("TCG runs the probe guest", async () => {
    expect(await probeAccel(qemu!, "tcg")).toBeNull();
  });

  it("auto takes KVM when a guest runs under it, else falls back to TCG with KVM's reason", async () => {
    const kvm = await probeAccel(qemu!, "kvm");
    const auto = await chooseAccel(qemu!, "auto");
    console.log(`vm probe here: /dev/kvm ${existsSync("/dev/kvm") ? "exists" : "is absent"}; ${auto.accel}: ${auto.why}`);
    if (kvm === null) {
      expect(auto).toMatchObject({ accel: "kvm", cpu: "host" });
    } else {
      // Here /dev/kvm exists and KVM still fails (failed to set MSR 0x10a): the file's presence decides nothing.
      expect(auto).toMatchObject({ accel: "tcg", cpu: "qemu64" });
      expect(auto.why).toContain(`KVM does not run here: ${kvm}`);
      const forced = await chooseAccel(qemu!, "kvm");
      expect(forced.accel).toBeNull();
      expect(forced.why).toContain(kvm);
    }
  });

  it("a qemu that is not there is a reason, not a crash", async () => {
    const why = await probeAccel("/nonexistent/qemu-system-x86_64", "tcg");
    expect(why).toMatch(/ENOENT|not found|exit 127/);
  });
});
