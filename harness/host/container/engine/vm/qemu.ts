import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ProcessIdentity } from "../../../../../lib/proc/identity.ts";
import { readProcStat } from "../../../../../lib/proc/stat.ts";
import { runCommand } from "../../command.ts";
import { ContainerError } from "../../errors.ts";
import { npmDirBeside } from "../../host-checks/npm-beside.ts";
import type { ResolvedOptions } from "../../options.ts";
import type { GuestImage } from "./guest-image.ts";
import type { AccelChoice } from "./accel-probe.ts";

/**
 * A host directory the guest sees over 9p. Read-only shares use
 * `security_model=none` (the guest sees the host's owners and modes); the
 * ones the guest writes (reports, a scenario's folder) use `mapped-xattr`,
 * never `passthrough`: with passthrough the guest's root could plant a
 * setuid-root file on the host.
 */
export interface Share {
  /** The 9p mount tag (at most 31 bytes). */
  tag: string;
  host: string;
  inside: string;
  readonly: boolean;
}

/** Where the files of one run live on the host: the overlay, the console, and the 0700 socket directory. */
export interface VmPaths {
  overlay: string;
  console: string;
  qemuLog: string;
  sockets: string;
  qmp: string;
  agent: string;
}

/** The longest path a unix socket may have (sun_path holds 108 bytes with its NUL). */
const SUN_PATH_MAX = 107;

export function vmPaths(runDir: string): VmPaths {
  const sockets = join(runDir, "sockets");
  return {
    overlay: join(runDir, "overlay.qcow2"),
    console: join(runDir, "console.log"),
    qemuLog: join(runDir, "qemu.log"),
    sockets,
    qmp: join(sockets, "qmp.sock"),
    agent: join(sockets, "agent.sock"),
  };
}

/** Where the host's Node directory appears in the guest before its binary is bound at /usr/local/bin/node. */
export const NODE_DIR_INSIDE = "/run/outlive/node";

/**
 * What the guest mounts, in order (a share inside another comes after it).
 * The project is read-only as a whole, except its reports folder, which
 * the driver writes; extra binds are written by scenarios, except a linked
 * node_modules (a bind marked `readonly`). Pure.
 */
export function vmShares(options: Pick<ResolvedOptions, "projectDir" | "nodePath" | "binds">, npmDir: string | null = npmDirBeside(options.nodePath)): Share[] {
  const shares: Share[] = [
    { tag: "node", host: dirname(options.nodePath), inside: NODE_DIR_INSIDE, readonly: true },
    { tag: "project", host: options.projectDir, inside: "/work/project", readonly: true },
    { tag: "reports", host: join(options.projectDir, "harness", "reports"), inside: "/work/project/harness/reports", readonly: false },
  ];
  if (npmDir) shares.push({ tag: "npm", host: npmDir, inside: "/usr/local/lib/node_modules/npm", readonly: true });
  // A node_modules shared from another checkout (a worktree's symlink) is read like the project: read-only, cached.
  options.binds.forEach((b, i) => shares.push({ tag: `bind${i}`, host: b.host, inside: b.inside, readonly: b.readonly === true }));
  return shares;
}

/** The guest agent's chardev, as qemu's monitor names it. */
export const AGENT_CHARDEV = "qga0";

/**
 * The kernel's command line: Debian's kernel on the raw ext4 disk, the
 * console on the serial port, pure cgroup v2. Under TCG the guest keeps time
 * by the HPET, not the TSC: a TCG guest's TSC is the host's raw TSC, which
 * runs on while the host itself is frozen (a paused VM) when the host's
 * monotonic clock, and with it qemu's, does not. A clean-clone run saw the
 * guest's clock leap 39 minutes in half a second of the HPET's ("Long readout
 * interval … cs_nsec: 2323412936532 wd_nsec: 482027920"), and systemd end the
 * scenario's driver at its RuntimeMaxSec. Under KVM, kvm-clock is right as it is.
 */
export function kernelCommandLine(accel: "kvm" | "tcg" = "kvm"): string {
  // panic=-1 with -no-reboot: a guest that cannot mount its root ends qemu at once instead of waiting out the boot bound.
  return `root=/dev/vda rw console=ttyS0 systemd.unified_cgroup_hierarchy=1 panic=-1${accel === "tcg" ? " clocksource=hpet" : ""}`;
}

/** The argv qemu gets; pure, so it can be checked without booting. */
export function qemuArgv(options: Pick<ResolvedOptions, "qemuCommand" | "vmMemoryMiB" | "vmCpus" | "name">, image: Pick<GuestImage, "kernel" | "initrd">, accel: Pick<AccelChoice, "accel" | "cpu">, paths: VmPaths, shares: readonly Share[]): string[] {
  return [
    options.qemuCommand,
    "-name", options.name,
    "-accel", accel.accel, "-cpu", accel.cpu,
    "-m", String(options.vmMemoryMiB), "-smp", String(options.vmCpus),
    // Only the devices below: no default NIC, VGA, floppy or CD-ROM. The guest has no network at all.
    "-nodefaults", "-nic", "none", "-display", "none", "-no-reboot",
    "-kernel", image.kernel, "-initrd", image.initrd, "-append", kernelCommandLine(accel.accel),
    "-drive", `file=${paths.overlay},if=virtio,format=qcow2`,
    "-device", "virtio-rng-pci",
    "-chardev", `file,id=console,path=${paths.console}`, "-serial", "chardev:console",
    // The machine protocol only; the human monitor (which can run host commands) is not offered anywhere.
    "-qmp", `unix:${paths.qmp},server=on,wait=off`,
    "-device", "virtio-serial",
    "-chardev", `socket,path=${paths.agent},server=on,wait=off,id=${AGENT_CHARDEV}`,
    "-device", `virtserialport,chardev=${AGENT_CHARDEV},name=org.qemu.guest_agent.0`,
    ...shares.flatMap((s) => [
      "-virtfs",
      `local,path=${s.host},mount_tag=${s.tag},security_model=${s.readonly ? "none" : "mapped-xattr"}${s.readonly ? ",readonly=on" : ""}`,
    ]),
  ];
}

/** Makes the run's throw-away overlay on the cached image: the image itself is never written, so runs are independent. */
export async function makeOverlay(qemuImg: string, image: GuestImage, overlay: string): Promise<void> {
  const r = await runCommand([qemuImg, "create", "-q", "-f", "qcow2", "-b", image.disk, "-F", "raw", overlay], { timeoutMs: 30_000 });
  if (r.exitCode !== 0) throw new ContainerError("boot-failed", `qemu-img could not make an overlay on ${image.disk}: ${r.stderr.trim()}`);
}

/**
 * Starts qemu detached (it outlives a CLI `up`), its output in qemu.log,
 * the guest's console in console.log. The socket directory is made 0700
 * first: whoever can reach the monitor can end or reset the machine.
 */
export function launchQemu(argv: string[], paths: VmPaths): ProcessIdentity {
  for (const socket of [paths.qmp, paths.agent]) {
    if (socket.length > SUN_PATH_MAX) {
      throw new ContainerError("bad-option", `the vm's socket path ${socket} is longer than ${SUN_PATH_MAX} bytes: pass a shorter cacheDir (--cache-dir)`);
    }
  }
  mkdirSync(paths.sockets, { recursive: true, mode: 0o700 });
  const log = openSync(paths.qemuLog, "a");
  const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: ["ignore", log, log] });
  closeSync(log);
  child.on("error", () => {}); // a missing binary is found before launch; the pid check below covers the rest
  child.unref();
  const stat = child.pid === undefined ? null : readProcStat(child.pid);
  if (child.pid === undefined || stat === null) {
    throw new ContainerError("boot-failed", `could not start ${argv[0]}: ${qemuSaid(paths) || "no pid"}`, [paths.qemuLog]);
  }
  const identity = { pid: child.pid, startTime: stat.startTime };
  // Unref'd, the child still reports its end while this process lives: a guest that panicked or rebooted under
  // -no-reboot ends qemu with 0; a qemu that crashed ends by a signal, with nothing on the guest's console.
  endings.set(key(identity), new Promise((resolve) => child.once("exit", (code, signal) => resolve(signal ? `was ended by ${signal}` : `exited with code ${code}`))));
  return identity;
}

/** How each qemu this process launched ends, by pid and start time: settles once the child's exit is seen. */
const endings = new Map<string, Promise<string>>();
const key = (p: ProcessIdentity) => `${p.pid}@${p.startTime}`;

/**
 * How a qemu this process launched ended ("exited with code 0", "was ended by SIGSEGV"), waiting up to `waitMs`
 * for its exit to be seen: a qemu that has just ended is a zombie (gone to isSameProcess) until this process's
 * event loop reaps it, a window a loaded machine widens. null: launched by another process, or not ended within
 * the wait.
 */
export async function qemuEnding(qemu: ProcessIdentity, waitMs: number): Promise<string | null> {
  const ending = endings.get(key(qemu));
  if (!ending) return null;
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), waitMs)));
  return Promise.race([ending, bound]).finally(() => clearTimeout(timer));
}

/** qemu's last line of complaint, for a boot that failed. */
export function qemuSaid(paths: Pick<VmPaths, "qemuLog">): string {
  if (!existsSync(paths.qemuLog)) return "";
  return readFileSync(paths.qemuLog, "utf8").trim().split("\n").at(-1)?.replace(/^qemu-system-\w+: /, "") ?? "";
}

/**
 * What the guest's console said last that explains a failed boot (the
 * initramfs giving up on its root, a kernel panic), for the one line a
 * person reads; the whole console stays in console.log.
 */
export function consoleSaid(paths: Pick<VmPaths, "console">): string {
  if (!existsSync(paths.console)) return "";
  return explainConsole(readFileSync(paths.console, "utf8"));
}

/** Pure: a console's lines as a person reads them, colours and kernel timestamps taken off, blank lines dropped. */
export function consoleLines(text: string): string[] {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "").split(/\r?\n/).map((l) => l.replace(/^\[\s*[\d.]+\]\s*/, "").trim()).filter(Boolean);
}

/** Pure: the line of a console log that says why the boot ended, the initramfs's or kernel's own words first. */
export function explainConsole(text: string): string {
  const lines = consoleLines(text);
  // The kernel's own command line names panic=-1: it is no complaint.
  const first = (pattern: RegExp) => lines.filter((l) => pattern.test(l) && !/Rebooting automatically|^Kernel command line:/.test(l)).at(-1);
  const said = first(/Failed to mount|ALERT!|Kernel panic|Gave up waiting|No init found/) ?? first(/panic|failed|error|cannot/i) ?? lines.at(-1) ?? "";
  return said.slice(0, 200);
}
