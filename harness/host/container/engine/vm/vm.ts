import { basename, dirname, join } from "node:path";
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { isSameProcess, type ProcessIdentity } from "../../../../../lib/proc/identity.ts";
import type { CommandResult } from "../../command.ts";
import { ContainerError } from "../../errors.ts";
import type { Engine, EnterOptions, Machine, RebootHow, TeardownReport } from "../../machine.ts";
import type { ResolvedOptions } from "../../options.ts";
import { findTool, requireRoot, requireTool, type ToolNeed } from "../../host-checks/preconditions.ts";
import type { Log } from "../../image/rootfs.ts";
import { commonState, type CommonState, saveState } from "../../state.ts";
import { GuestAgent } from "./guest-agent.ts";
import { qmpCommand } from "./qmp.ts";
import { AGENT_CHARDEV, consoleLines, consoleSaid, launchQemu, makeOverlay, NODE_DIR_INSIDE, qemuArgv, qemuEnding, qemuSaid, type Share, type VmPaths, vmPaths, vmShares } from "./qemu.ts";
import { ensureGuestImage } from "./guest-image.ts";
import { type AccelChoice, type AccelOption, chooseAccel, DEFAULT_QEMU } from "./accel-probe.ts";
import { lastConsoleLine, stallDecision } from "./reboot-stall.ts";
import { stopVm } from "./teardown.ts";
import type { VmState } from "./vm-state.ts";

export type { VmState };


/** How long an open agent connection may hear nothing before it is taken for deaf and made afresh (see dropAgentIfDeaf). */
const AGENT_DEAF_MS = 30_000;
/** How many of the console's last lines `lastWords` gives: a panic's or a reboot's own lines, and what led to them. */
const LAST_WORDS_LINES = 12;
/** How long `lastWords` waits for a qemu that is gone to be reaped, so that its exit code or signal is known. */
const ENDING_WAIT_MS = 5_000;
/**
 * How long `lastWords` waits for the qemu of a guest whose console says it panicked to end. With panic=-1 the
 * kernel restarts at once and -no-reboot makes that qemu's end, but under TCG on a busy machine the end came
 * after the harness asked (CI's run of 2026-12-07 said "qemu still runs" under a panic's trace).
 */
const PANIC_END_WAIT_MS = 30_000;
const VM_TOOLS: readonly ToolNeed[] = [["qemu-img", "qemu-utils"], ["mkfs.ext4", "e2fsprogs"], ["debootstrap", "debootstrap"]];
/** A clean PATH inside: the guest agent's own environment is not the one a login has. */
const INSIDE_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** One probe per qemu and choice in a process: `engine` and the boot after it ask the same question. */
const probes = new Map<string, ReturnType<typeof chooseAccel>>();
function probe(qemu: string, wanted: AccelOption): ReturnType<typeof chooseAccel> {
  const key = `${qemu} ${wanted}`;
  if (!probes.has(key)) probes.set(key, chooseAccel(qemu, wanted));
  return probes.get(key)!;
}

/** Why the vm engine cannot boot here, or null. Boots one probe guest (about 0.1 s), nothing else. */
export async function vmMissing(nodePath: string, qemuCommand: string = DEFAULT_QEMU, wanted: AccelOption = "auto"): Promise<string | null> {
  if (typeof process.getuid === "function" && process.getuid() !== 0) return "needs root (uid 0): the guest image is built in a chroot";
  const qemu = await findTool(qemuCommand);
  if (qemu === null) return `${qemuCommand} is not installed (Debian package qemu-system-x86): run container/install-deps.sh`;
  for (const [tool, pkg] of VM_TOOLS) {
    if ((await findTool(tool)) === null) return `${tool} is not installed (Debian package ${pkg}): run container/install-deps.sh`;
  }
  if (!existsSync(nodePath)) return `no Node binary at ${nodePath} to share with the guest`;
  const choice = await probe(qemu, wanted);
  return choice.accel === null ? choice.why : null;
}

/**
 * The vm engine: the suite's guest image (the cached rootfs with Debian's
 * kernel and guest agent) booted by qemu on a throw-away overlay, with its
 * own kernel, so pure cgroup v2 with every controller, whatever the host
 * has. KVM where a probe guest runs under it, TCG otherwise. Never picked
 * by `auto`: a boot costs tens of seconds under TCG.
 */
export const vmEngine: Engine = {
  missing: (nodePath) => vmMissing(nodePath),
  prepare: async (options, log) => {
    const image = await ensureGuestImage(options, log);
    return `${image.disk}${image.buildMs === null ? " (cached)" : ` (built in ${(image.buildMs / 1000).toFixed(1)} s)`}`;
  },
  howItRuns: async (options) => (await probe(options.qemuCommand, options.vmAccel)).why,
  boot: bootVm,
  attach: (state) => new VmMachine(state as VmState),
};

async function bootVm(options: ResolvedOptions, log: Log): Promise<{ machine: Machine; launchedAt: number }> {
  requireRoot();
  const qemu = await findTool(options.qemuCommand);
  if (qemu === null) throw new ContainerError("missing-package", `${options.qemuCommand} is not installed (Debian package qemu-system-x86): run container/install-deps.sh as root, or pass qemuCommand`);
  const qemuImg = await requireTool("qemu-img", "qemu-utils");
  if (!existsSync(options.nodePath)) {
    throw new ContainerError("missing-package", `no Node binary at ${options.nodePath} to share with the guest: install nodejs >= 20 or pass nodePath`);
  }
  const choice = await probe(qemu, options.vmAccel);
  if (choice.accel === null) throw new ContainerError("no-engine", choice.why);
  const image = await ensureGuestImage(options, log);
  const shares = vmShares(options);
  for (const share of shares) {
    if (!share.readonly) mkdirSync(share.host, { recursive: true });
    if (!existsSync(share.host)) throw new ContainerError("bad-option", `${share.host} (shared with the guest at ${share.inside}) does not exist`);
  }
  mkdirSync(options.runDir, { recursive: true });
  const paths = vmPaths(options.runDir);
  await makeOverlay(qemuImg, image, paths.overlay);
  const accel = { ...choice, accel: choice.accel };
  const launchedAt = Date.now();
  let identity: ProcessIdentity;
  try {
    identity = launchQemu(qemuArgv({ ...options, qemuCommand: qemu }, image, accel, paths, shares), paths);
  } catch (error) {
    await stopVm({ ...placeholderState(options, paths, accel, image.entry, shares) }, options.stopTimeoutMs);
    throw error;
  }
  const state: VmState = { ...placeholderState(options, paths, accel, image.entry, shares), qemu: identity };
  // Saved before anything can fail, so `down` finds a machine that never got ready.
  saveState(state);
  const machine = new VmMachine(state);
  try {
    await machine.waitForAgent(options.bootTimeoutMs);
    await machine.mountSharesWithin(Math.max(0, launchedAt + options.bootTimeoutMs - Date.now()));
  } catch (error) {
    const kept = keepConsole(paths);
    const report = await machine.stop(options.stopTimeoutMs);
    if (error instanceof ContainerError) {
      error.kept.splice(0, error.kept.length, ...kept);
      if (!report.clean) error.kept.push(`leftovers: ${report.leftovers.join(", ")}`);
    }
    throw error;
  }
  log(`${options.name}: qemu ${accel.accel.toUpperCase()} (${accel.why}), guest agent up after ${((Date.now() - launchedAt) / 1000).toFixed(1)} s`);
  return { machine, launchedAt };
}

/** A boot that failed keeps the guest's console (teardown removes console.log with the run) for a person to read. */
function keepConsole(paths: VmPaths): string[] {
  const kept = join(dirname(paths.console), "boot-console.log");
  try {
    copyFileSync(paths.console, kept);
    return [kept];
  } catch {
    return [];
  }
}

function placeholderState(options: ResolvedOptions, paths: VmPaths, accel: AccelChoice, image: string, shares: Share[]): VmState {
  return {
    engine: "vm",
    ...commonState(options),
    startedAt: new Date().toISOString(),
    qemu: { pid: -1, startTime: "" },
    accel,
    image,
    paths,
    shares,
    nodeBinary: basename(options.nodePath),
  };
}

export class VmMachine implements Machine {
  readonly engine = "vm" as const;
  readonly state: VmState;
  private agentClient: GuestAgent | null = null;
  /** The boot id read by prepareReboot, until the reboot it readied. */
  private armedBootId: string | null = null;

  constructor(state: VmState) {
    this.state = state;
  }

  get name(): string {
    return this.state.name;
  }

  private agent(): GuestAgent {
    this.agentClient ??= new GuestAgent(this.state.paths.agent);
    return this.agentClient;
  }

  /** Ends the agent client, so that the next request connects afresh (teardown, and a connection gone deaf). */
  private dropAgent(): void {
    this.agentClient?.close();
    this.agentClient = null;
  }

  /**
   * Drops the agent's connection only once it has heard nothing for
   * AGENT_DEAF_MS, never right after a request that timed out. A client that
   * gave up on each unanswered try after 2 s and connected afresh saw a new
   * boot never answer (bookworm in CI; trixie through two more resets, each
   * boot with its agent started). By qemu 7.2's code, a virtio-serial port
   * whose write meets a client that has just closed can stay throttled until
   * the next disconnect (a flood of answers cut off by a close did not
   * reproduce it here: a reading, not a measurement). A connection kept open
   * is never written to closed; one silent this long is closed while nothing
   * is on its way, and the next is made afresh, which also cures the older
   * failure (one connection kept deaf through a trixie power cut).
   */
  private dropAgentIfDeaf(): void {
    if ((this.agentClient?.silentMs() ?? 0) >= AGENT_DEAF_MS) this.dropAgent();
  }

  /** Until the guest agent answers (udev starts it once the virtio-serial port is seen), or qemu exits, or the bound passes. */
  async waitForAgent(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!isSameProcess(this.state.qemu)) {
        const said = consoleSaid(this.state.paths) || qemuSaid(this.state.paths);
        throw new ContainerError("boot-failed", `qemu exited before the guest agent answered${said ? `: ${said}` : ""}`, [this.state.paths.console, this.state.paths.qemuLog]);
      }
      try {
        await this.agent().sync(2_000);
        return;
      } catch {
        this.dropAgentIfDeaf();
        if (Date.now() >= deadline) {
          throw new ContainerError("boot-failed", `the guest agent did not answer within ${timeoutMs / 1000} s (last on the console: ${consoleSaid(this.state.paths) || "nothing"})`, [this.state.paths.console]);
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  /**
   * mountShares, tried again each second until it works or `timeoutMs`
   * passes: the agent starts as soon as udev sees its port, early in the
   * boot, and a 9p mount tried before the kernel has probed that share's
   * virtio device fails ("9pnet_virtio: no channels available for device",
   * seen on trixie after a power cut).
   */
  async mountSharesWithin(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        return await this.mountShares();
      } catch (error) {
        if (Date.now() >= deadline) throw error;
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  }

  /** Mounts the 9p shares in order, then binds the host's Node at /usr/local/bin/node, where the other engines put it. */
  async mountShares(): Promise<void> {
    // Paths travel as arguments, never spliced into the script, so no quoting can break them.
    const script = [
      "set -eu",
      'node="$1"; shift',
      // Idempotent: after a reboot it is tried again until the new boot lets it through.
      'while [ $# -gt 0 ]; do mkdir -p "$3"; mountpoint -q "$3" || mount -t 9p -o "$1" "$2" "$3"; shift 3; done',
      // The touch only where nothing is bound yet: on the read-only bind an earlier try made (its answer lost to the
      // agent's timeout on a loaded host), touch itself fails with EROFS, and every retry after it did.
      'mountpoint -q /usr/local/bin/node || { touch /usr/local/bin/node && mount --bind "$node" /usr/local/bin/node; }',
    ].join("\n");
    const args = this.state.shares.flatMap((s) => [`trans=virtio,version=9p2000.L,msize=524288${s.readonly ? ",ro,cache=loose" : ""}`, s.tag, s.inside]);
    const r = await this.enter(["/bin/sh", "-c", script, "sh", `${NODE_DIR_INSIDE}/${this.state.nodeBinary}`, ...args], { timeoutMs: 30_000 });
    if (r.exitCode !== 0) throw new ContainerError("boot-failed", `could not mount the host's folders in ${this.name}: ${(r.stderr || r.stdout).trim().split("\n").at(-1)}`);
  }

  /**
   * Runs argv in the guest through its agent (`guest-exec`), with a clean
   * environment, as root unless `as` says otherwise (setpriv, like the host
   * engine). `timeout` inside ends the command a second after the host's
   * bound, since the agent cannot signal what it started.
   */
  async enter(argv: string[], options: EnterOptions): Promise<CommandResult> {
    if (!isSameProcess(this.state.qemu)) {
      return { exitCode: null, signal: null, stdout: "", stderr: `vm ${this.name} is not running`, timedOut: false };
    }
    const as = options.as ? ["setpriv", `--reuid=${options.as.uid}`, `--regid=${options.as.gid}`, "--clear-groups", "--"] : [];
    const bound = String(Math.ceil(options.timeoutMs / 1000) + 1);
    try {
      return await this.agent().exec(["/usr/bin/env", "-i", INSIDE_PATH, "timeout", "-k", "2", bound, ...as, ...argv], {
        timeoutMs: options.timeoutMs,
        input: options.input,
      });
    } catch (error) {
      return { exitCode: null, signal: null, stdout: "", stderr: `vm ${this.name}: ${(error as Error).message}`, timedOut: false };
    }
  }

  async isAlive(): Promise<boolean> {
    return isSameProcess(this.state.qemu);
  }

  /**
   * A power cut is qemu's `system_reset` (the guest's memory, with every
   * write it had not flushed, is gone; what reached the virtual disk stays);
   * a clean reboot is `systemctl reboot` in the guest. qemu runs with
   * `-no-reboot` (a guest that panics ends it), so first the machine's reboot
   * action becomes a reset. Resolves once the guest agent answers from a new
   * boot (another boot id) and the shares are mounted again.
   */
  async reboot(how: RebootHow, timeoutMs: number): Promise<{ issuedAt: number; resets: string[] }> {
    const deadline = Date.now() + timeoutMs;
    if (this.armedBootId === null) await this.prepareReboot();
    const before = this.armedBootId!;
    this.armedBootId = null;
    const consoleAt = this.consoleSize();
    const issuedAt = Date.now();
    if (how === "power-cut") {
      await qmpCommand(this.state.paths.qmp, "system_reset", 10_000);
    } else {
      // systemctl returns once the job is queued; the agent may be stopped before it answers.
      await this.enter(["systemctl", "reboot"], { timeoutMs: 10_000 });
    }
    // The agent's connection stays open across the reboot (see dropAgentIfDeaf): the new boot's agent answers on it.
    const resets: string[] = [];
    let size = this.consoleSize();
    let quietSince = Date.now();
    for (;;) {
      if (!isSameProcess(this.state.qemu)) {
        throw new ContainerError("boot-failed", `qemu exited during the ${how} reboot${consoleSaid(this.state.paths) ? `: ${consoleSaid(this.state.paths)}` : ""}`, [this.state.paths.console]);
      }
      const now = await this.bootId(2_000).catch(() => "");
      if (now !== "" && now !== before) break;
      this.dropAgentIfDeaf();
      const grown = this.consoleSize();
      if (grown !== size) [size, quietSince] = [grown, Date.now()];
      const since = this.consoleSince(consoleAt);
      const stalled = stallDecision({ how, consoleSince: since, quietSince, now: Date.now(), extraResets: resets.length });
      if (stalled === "reset") {
        // The guest hung in its new boot before anything of the scenario ran in it: reset it once more (the monitor must answer).
        const why = `the guest's console was silent for ${Math.round((Date.now() - quietSince) / 1000)} s after "${lastConsoleLine(since)}"`;
        await qmpCommand(this.state.paths.qmp, "system_reset", 10_000).catch((error: Error) => {
          throw new ContainerError("boot-failed", `vm ${this.name}: ${why}, and qemu's monitor did not take a reset (${error.message})`, keepConsole(this.state.paths));
        });
        resets.push(`${why}: reset again`);
        quietSince = Date.now();
      }
      if (Date.now() >= deadline || stalled === "give-up") {
        // The console goes with the run at teardown: a copy beside it stays for a person to read.
        const monitor = await this.monitorSays();
        throw new ContainerError("boot-failed", `vm ${this.name} did not come back from the ${how} reboot within ${Math.round((Date.now() - issuedAt) / 1000)} s${resets.length ? ` and ${resets.length} more reset(s)` : ""}; ${monitor} (last on the console: "${lastConsoleLine(since) || "nothing"}"; ${consoleSaid(this.state.paths) || "no complaint"})`, keepConsole(this.state.paths));
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    await this.mountSharesWithin(Math.max(0, deadline - Date.now()));
    return { issuedAt, resets };
  }

  /** What qemu's monitor says of the machine and of the agent's channel, for a person reading why a reboot was given up. */
  private async monitorSays(): Promise<string> {
    try {
      const status = (await qmpCommand(this.state.paths.qmp, "query-status", 5_000)) as { status?: string };
      const chardevs = (await qmpCommand(this.state.paths.qmp, "query-chardev", 5_000)) as Array<{ label: string; filename: string; "frontend-open": boolean }>;
      const agent = chardevs.find((c) => c.label === AGENT_CHARDEV);
      return `qemu's monitor says ${status.status}, the agent's channel ${agent ? `${agent.filename.startsWith("disconnected:") ? "has no client" : "has a client"} and the guest has ${agent["frontend-open"] ? "opened" : "not opened"} its port` : "is not listed"}`;
    } catch (error) {
      return `qemu's monitor does not answer (${(error as Error).message})`;
    }
  }

  private consoleSize(): number {
    try {
      return statSync(this.state.paths.console).size;
    } catch {
      return 0;
    }
  }

  /** The console written from byte `offset` on, as text. */
  private consoleSince(offset: number): string {
    try {
      return readFileSync(this.state.paths.console).subarray(offset).toString("utf8");
    } catch {
      return "";
    }
  }

  /**
   * Reads the boot id the reboot compares against and makes the machine's
   * reboot action a reset, ahead of the ask: a power cut must come within a
   * second of the writes under test, and each agent round trip costs tens of
   * milliseconds under TCG (hundreds on a loaded host; one run took 1.1 s
   * from ask to reset with both done after the ask).
   */
  async prepareReboot(): Promise<void> {
    const id = await this.bootId();
    if (id === "") throw new ContainerError("not-running", `vm ${this.name}: no boot id from the guest before the reboot`);
    await qmpCommand(this.state.paths.qmp, "set-action", 10_000, { reboot: "reset" });
    this.armedBootId = id;
  }

  async endReboots(): Promise<void> {
    this.armedBootId = null;
    // qemu's -no-reboot is this action: a reboot (a panic's under panic=-1 among them) shuts the machine down.
    await qmpCommand(this.state.paths.qmp, "set-action", 10_000, { reboot: "shutdown" });
  }

  consoleLog(): string {
    try {
      return readFileSync(this.state.paths.console, "utf8");
    } catch {
      return "";
    }
  }

  async lastWords(): Promise<string[]> {
    let lines = consoleLines(this.consoleLog());
    let running = isSameProcess(this.state.qemu);
    let ending: string | null = null;
    if (running && lines.some((l) => /Kernel panic/.test(l))) {
      // A panicked guest's qemu ends by itself: its end (or the bound) comes first, and the console is read again after it.
      ending = await qemuEnding(this.state.qemu, PANIC_END_WAIT_MS);
      running = ending === null && isSameProcess(this.state.qemu);
      lines = consoleLines(this.consoleLog());
    }
    if (!running) ending ??= (await qemuEnding(this.state.qemu, ENDING_WAIT_MS)) ?? "has exited";
    const said = qemuSaid(this.state.paths);
    const qemu = running ? "qemu still runs" : `qemu ${ending}${said ? ` (its log ends: ${said})` : ""}`;
    const tail = lines.slice(-LAST_WORDS_LINES);
    // A panic's own line comes before its trace, which alone fills the tail: it is given first.
    const cause = lines.filter((l) => /Kernel panic|BUG: |Oops: |general protection fault|reboot: /.test(l)).at(-1);
    const before = cause && !tail.includes(cause) ? [cause, "…"] : [];
    return [qemu, ...[...before, ...tail].map((l) => `console: ${l.slice(0, 200)}`)];
  }

  /** The guest kernel's boot id, "" when the agent does not answer within the bound. */
  private async bootId(timeoutMs = 10_000): Promise<string> {
    const r = await this.enter(["cat", "/proc/sys/kernel/random/boot_id"], { timeoutMs });
    return r.exitCode === 0 ? r.stdout.trim() : "";
  }

  async stop(timeoutMs: number): Promise<TeardownReport> {
    this.dropAgent();
    return await stopVm(this.state, timeoutMs);
  }
}
