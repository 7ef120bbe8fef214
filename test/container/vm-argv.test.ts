import { describe, expect, it } from "vitest";
import { resolveOptions } from "../../harness/host/container/options.ts";
import { explainConsole, qemuArgv, vmPaths, vmShares } from "../../harness/host/container/engine/vm/qemu.ts";
import { hasExt4Superblock } from "../../harness/host/container/engine/vm/guest-image.ts";

describe("the vm engine as data", () => {
  const options = resolveOptions({ engine: "vm", name: "outlive-bookworm-1", projectDir: "/p", nodePath: "/opt/node/bin/node", binds: [{ host: "/scen", inside: "/work/host/scen" }] });

  it("has defaults a user can change, and names a bad one", () => {
    expect(options).toMatchObject({ qemuCommand: "qemu-system-x86_64", vmAccel: "auto", vmMemoryMiB: 1024, vmCpus: 2, vmDiskMiB: 3072, bootTimeoutMs: 240_000 });
    expect(resolveOptions({ engine: "nspawn" }).bootTimeoutMs).toBe(60_000);
    expect(() => resolveOptions({ vmAccel: "hvf" as never })).toThrow("Expected the `vmAccel` option to be auto, kvm or tcg, got `hvf` (string)");
    expect(() => resolveOptions({ vmCpus: 0 })).toThrow(/`vmCpus`.*`0` \(number\)/);
  });

  it("boots with no network, QMP and the agent on unix sockets in the run's socket directory, and never 9p passthrough", () => {
    const paths = vmPaths("/c/runs/outlive-bookworm-1");
    const shares = vmShares(options, null);
    const argv = qemuArgv(options, { kernel: "/img/vmlinuz", initrd: "/img/initrd.img" }, { accel: "tcg", cpu: "qemu64" }, paths, shares);
    const text = argv.join(" ");
    expect(text).toContain("-accel tcg -cpu qemu64 -m 1024 -smp 2 -nodefaults -nic none");
    expect(text).toContain("-qmp unix:/c/runs/outlive-bookworm-1/sockets/qmp.sock,server=on,wait=off");
    expect(text).toContain("socket,path=/c/runs/outlive-bookworm-1/sockets/agent.sock,server=on,wait=off,id=qga0");
    expect(text).toContain("virtserialport,chardev=qga0,name=org.qemu.guest_agent.0");
    expect(text).toContain("file=/c/runs/outlive-bookworm-1/overlay.qcow2,if=virtio,format=qcow2");
    expect(text).not.toMatch(/passthrough|-monitor|-netdev/);
    const virtfs = argv.filter((a, i) => argv[i - 1] === "-virtfs");
    expect(virtfs).toEqual([
      "local,path=/opt/node/bin,mount_tag=node,security_model=none,readonly=on",
      "local,path=/p,mount_tag=project,security_model=none,readonly=on",
      "local,path=/p/harness/reports,mount_tag=reports,security_model=mapped-xattr",
      "local,path=/scen,mount_tag=bind0,security_model=mapped-xattr",
    ]);
  });

  it("a linked node_modules is shared read-only", () => {
    const shares = vmShares({ ...options, binds: [{ host: "/main/node_modules", inside: "/work/main/node_modules", readonly: true }] }, null);
    expect(shares.at(-1)).toEqual({ tag: "bind0", host: "/main/node_modules", inside: "/work/main/node_modules", readonly: true });
  });

  it("finds the line of a console log that says why the boot ended", () => {
    const log = "[    2.1] virtio_blk virtio1: [vda] 131072 512-byte logical blocks\r\nmount: mounting /dev/vda on /root failed: Invalid argument\r\nFailed to mount /dev/vda as root file system.\r\nRebooting automatically due to panic= boot argument\r\n";
    expect(explainConsole(log)).toBe("Failed to mount /dev/vda as root file system.");
    expect(explainConsole("[    1.0] Kernel panic - not syncing: VFS: Unable to mount root fs\n")).toBe("Kernel panic - not syncing: VFS: Unable to mount root fs");
  });

  it("tells an ext4 disk from one without a file system", () => {
    const disk = Buffer.alloc(2048);
    expect(hasExt4Superblock(disk)).toBe(false);
    disk.writeUInt16LE(0xef53, 1080);
    expect(hasExt4Superblock(disk)).toBe(true);
    expect(hasExt4Superblock(Buffer.alloc(100))).toBe(false);
  });
});
