import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand } from "../../command.ts";

/** How the vm engine would run qemu here: an accelerator, the CPU model that goes with it, and why it was picked. */
export interface AccelChoice {
  accel: "kvm" | "tcg";
  cpu: string;
  /** One line for a person: what was tried and what happened. */
  why: string;
}

/** The qemu the vm engine runs when `qemuCommand` says nothing (options.ts's default too). */
export const DEFAULT_QEMU = "qemu-system-x86_64";

/** What `vmAccel` may say: `auto` probes KVM and falls back to TCG. */
export type AccelOption = "auto" | "kvm" | "tcg";

/**
 * The CPU model each accelerator boots with: the host's own under KVM; under TCG qemu's baseline x86-64
 * (`qemu64`), not `max` (every feature TCG emulates): memory-cap on 252, three rounds of each, alternating, on a
 * quiet machine (2026-12-07), booted in 31-36 s against 46-49 s and ran in 72-80 s against 96-99 s. The guests'
 * kernels, systemd and the host's Node need nothing past x86-64's baseline.
 */
export const CPU_FOR = { kvm: "host", tcg: "qemu64" } as const;

/** The exit code qemu gives when the probe guest wrote 42 to the isa-debug-exit port: (42 << 1) | 1. */
const PROBE_EXIT = 85;

/**
 * A tiny multiboot kernel (39 bytes): loaded at 1 MiB, it writes 42 to I/O
 * port 0xf4 (qemu's isa-debug-exit, which ends qemu with exit 85) and halts.
 * qemu exiting 85 proves the virtual CPU ran guest code under that
 * accelerator: more than "qemu started", which a KVM whose CPU hangs at the
 * first instruction also does. Pure.
 */
export function probeKernel(): Buffer {
  const magic = 0x1badb002;
  const flags = 0x00010000; // the address fields below are valid: a flat binary, no ELF
  const header = Buffer.alloc(32);
  const fields = [magic, flags, (-(magic + flags)) >>> 0, 0x100000, 0x100000, 0, 0, 0x100020];
  fields.forEach((value, i) => header.writeUInt32LE(value, i * 4));
  // mov al, 42; out 0xf4, al; hlt; jmp back to hlt
  return Buffer.concat([header, Buffer.from([0xb0, 0x2a, 0xe6, 0xf4, 0xf4, 0xeb, 0xfd])]);
}

/** The argv of one probe boot: no disk, no network, no display, 16 MiB. Pure. */
export function probeArgv(qemu: string, accel: "kvm" | "tcg", kernel: string): string[] {
  return [
    qemu, "-accel", accel, "-cpu", CPU_FOR[accel], "-m", "16", "-nodefaults", "-display", "none", "-no-reboot",
    "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04", "-kernel", kernel,
  ];
}

/** What one probe boot did, as a person reads it; null when the guest ran. Pure. */
export function judgeProbe(r: { exitCode: number | null; signal: string | null; stderr: string; timedOut: boolean }, timeoutMs: number): string | null {
  if (r.exitCode === PROBE_EXIT) return null;
  if (r.timedOut) return `qemu ran but its guest did not run one instruction within ${timeoutMs / 1000} s (hung)`;
  // qemu's own complaint is what a person needs ("failed to set MSR 0x10a to 0x69", "Could not access KVM kernel module").
  const lines = r.stderr.split("\n").map((l) => l.replace(/^qemu-system-\w+: /, "").replace(/^error: /, "").trim()).filter(Boolean);
  const said = lines.find((l) => !/Assertion .* failed/.test(l)) ?? lines[0];
  return `${said ?? `qemu exited ${r.exitCode ?? r.signal}`}${r.exitCode === null ? "" : ` (exit ${r.exitCode})`}`;
}

/** Boots the probe kernel once under one accelerator; null when it ran, else why not. */
export async function probeAccel(qemu: string, accel: "kvm" | "tcg", timeoutMs = 5_000): Promise<string | null> {
  const dir = mkdtempSync(join(tmpdir(), "outlive-vm-probe-"));
  try {
    const kernel = join(dir, "probe.bin");
    writeFileSync(kernel, probeKernel());
    const r = await runCommand(probeArgv(qemu, accel, kernel), { timeoutMs });
    return judgeProbe(r, timeoutMs);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Picks the accelerator by booting, not by looking for /dev/kvm: here
 * /dev/kvm exists, yet `-accel kvm -cpu host` aborts ("failed to set MSR
 * 0x10a"). `auto` tries KVM and falls back to TCG with KVM's reason; a
 * named one is only checked. Null `accel` when not even TCG runs.
 *
 * @example
 * ```ts
 * import { chooseAccel } from "./accel-probe.ts";
 * const c = await chooseAccel("qemu-system-x86_64", "auto");
 * console.log(c.accel ?? "none", c.why); // "tcg KVM does not run here: failed to set MSR 0x10a to 0x69 (exit 134); TCG runs"
 * ```
 */
export async function chooseAccel(qemu: string, wanted: AccelOption): Promise<{ accel: AccelChoice["accel"] | null; cpu: string; why: string }> {
  if (wanted !== "tcg") {
    const kvm = await probeAccel(qemu, "kvm");
    if (kvm === null) return { accel: "kvm", cpu: CPU_FOR.kvm, why: "KVM runs (a probe guest ran under -accel kvm -cpu host)" };
    if (wanted === "kvm") return { accel: null, cpu: CPU_FOR.kvm, why: `KVM does not run here (vmAccel kvm): ${kvm}` };
    const tcg = await probeAccel(qemu, "tcg");
    if (tcg === null) return { accel: "tcg", cpu: CPU_FOR.tcg, why: `KVM does not run here: ${kvm}; TCG (software emulation) runs` };
    return { accel: null, cpu: CPU_FOR.tcg, why: `neither KVM (${kvm}) nor TCG (${tcg}) runs a guest here` };
  }
  const tcg = await probeAccel(qemu, "tcg");
  return tcg === null
    ? { accel: "tcg", cpu: CPU_FOR.tcg, why: "TCG (software emulation) runs; KVM not tried (vmAccel tcg)" }
    : { accel: null, cpu: CPU_FOR.tcg, why: `TCG does not run a guest here: ${tcg}` };
}
