import { spawn } from "node:child_process";
import { existsSync, mkdirSync, openSync, closeSync, readFileSync, rmdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { waitUntil } from "../../../../../lib/kill/process-group.ts";
import { isSameProcess, type ProcessIdentity } from "../../../../../lib/proc/identity.ts";
import { readProcStat } from "../../../../../lib/proc/stat.ts";
import { childPids, runCommand, type CommandResult } from "../../command.ts";
import { ContainerError } from "../../errors.ts";
import { hostCgroupsMountingIfNeeded, releaseCgroup2Mount } from "../../host-checks/cgroup2-mount.ts";
import {
  cgroupPids,
  killCgroupTree,
  launchCgroupDirs,
  makeLaunchCgroup,
  removeCgroupTree,
  waitCgroupEmpty,
} from "../../host-checks/host-cgroup.ts";
import type { Engine, EnterOptions, Machine, TeardownReport } from "../../machine.ts";
import { mountsUnder } from "../../host-checks/mounts.ts";
import type { ResolvedOptions } from "../../options.ts";
import { requireRoot, requireTool, rootfsEngineMissing, type ToolNeed } from "../../host-checks/preconditions.ts";
import { ensureRootfs, type Log } from "../../image/rootfs.ts";
import { commonState, type CommonState, loadState, markStopped, saveState } from "../../state.ts";
import { npmDirBeside } from "../../host-checks/npm-beside.ts";

export interface NspawnState extends CommonState {
  engine: "nspawn";
  rootfs: string;
  /** The systemd-nspawn process; signalled only while its start time still matches. */
  nspawn: ProcessIdentity;
  /** The container's systemd (host pid), the target of nsenter. */
  pid1: ProcessIdentity | null;
  /** The launch cgroup in every hierarchy nspawn touched; removed at teardown. */
  cgroupDirs: string[];
  /** cgroup v2 mounted by the harness (a job container had none); unmounted by the last teardown. */
  mountedCgroup2?: string | null;
}

const NSPAWN_TOOLS: readonly ToolNeed[] = [["systemd-nspawn", "systemd-container"], ["debootstrap", "debootstrap"], ["nsenter", "util-linux"]];

/**
 * The nspawn engine: the cached debootstrapped rootfs booted with
 * `systemd-nspawn --volatile=overlay`, pure cgroup v2 inside on any host
 * layout.
 */
export const nspawnEngine: Engine = {
  missing: (nodePath) => rootfsEngineMissing(NSPAWN_TOOLS, nodePath),
  async boot(options: ResolvedOptions, log: Log) {
    const rootfs = await ensureRootfs(options, log);
    if (rootfs.buildMs !== null) log(`cold build of ${options.suite}: ${(rootfs.buildMs / 1000).toFixed(1)} s`);
    const launchedAt = Date.now();
    try {
      return { machine: await bootNspawn(options, rootfs.rootfs), launchedAt };
    } catch (error) {
      // A half-started nspawn has a state file: clean up through it so nothing stays behind.
      await stopSaved(options).catch(() => {});
      throw error;
    }
  },
  attach: (state) => new NspawnMachine(state as NspawnState),
};

async function stopSaved(options: ResolvedOptions): Promise<void> {
  await new NspawnMachine(loadState(options.cacheDir, options.name) as NspawnState).stop(options.stopTimeoutMs);
}

/** A clean PATH inside: nsenter would otherwise pass the host's environment (HOME=/root, test runner variables) through. */
const INSIDE_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export function consoleLogPath(runDir: string): string {
  return join(runDir, "console.log");
}

/** The argv nspawn gets; pure, so it can be checked without booting. */
export function nspawnArgv(options: ResolvedOptions, rootfs: string): string[] {
  return [
    "systemd-nspawn",
    "--directory", rootfs,
    // The cached root stays pristine and shareable: every container writes to a tmpfs overlay of its own.
    "--volatile=overlay",
    "--boot",
    "--register=no",
    "--keep-unit",
    "--console=pipe",
    "--quiet",
    "--machine", options.name,
    `--bind-ro=${options.nodePath}:/usr/local/bin/node`,
    // npm beside the host's Node, where the official images keep it: scenarios run MCP servers through npx.
    ...npmBind(options.nodePath),
    `--bind=${options.projectDir}:/work/project`,
    ...options.binds.map((b) => `--bind=${b.host}:${b.inside}`),
  ];
}


function npmBind(nodePath: string): string[] {
  const npm = npmDirBeside(nodePath);
  return npm ? [`--bind-ro=${npm}:/usr/local/lib/node_modules/npm`] : [];
}

/**
 * Starts systemd-nspawn from a cgroup of its own. Without one, nspawn (with
 * --keep-unit and no systemd on the host) makes its payload/ and supervisor/
 * cgroups inside whatever cgroup it was started from, shared with every
 * other container. The launching shell moves itself, then execs nspawn.
 */
export async function bootNspawn(options: ResolvedOptions, rootfs: string): Promise<NspawnMachine> {
  requireRoot();
  await requireTool("systemd-nspawn", "systemd-container");
  await requireTool("nsenter", "util-linux");
  if (!existsSync(options.nodePath)) {
    throw new ContainerError("missing-package", `no Node binary at ${options.nodePath} to bind into the container: install nodejs >= 20 or pass nodePath`);
  }
  const { host, mounted } = await hostCgroupsMountingIfNeeded();
  mkdirSync(options.runDir, { recursive: true });
  const launch = makeLaunchCgroup(host, options.name);
  const env: NodeJS.ProcessEnv = { ...process.env };
  // Unset means "like the host"; "0" would force full cgroup v1, which is not the host's layout either.
  if (options.unified) env.SYSTEMD_NSPAWN_UNIFIED_HIERARCHY = "1";
  else delete env.SYSTEMD_NSPAWN_UNIFIED_HIERARCHY;

  // Console output goes to a file, not a pipe: the CLI's `up` exits while the container runs on.
  const consoleFd = openSync(consoleLogPath(options.runDir), "a");
  const child = spawn(
    "/bin/sh",
    ["-c", 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"', "sh", launch, ...nspawnArgv(options, rootfs)],
    { detached: true, stdio: ["ignore", consoleFd, consoleFd], env },
  );
  closeSync(consoleFd);
  child.unref();
  const pid = child.pid;
  const stat = pid === undefined ? null : readProcStat(pid);
  if (pid === undefined || stat === null) {
    removeCgroupTree(launch);
    throw new ContainerError("boot-failed", `could not start systemd-nspawn (see ${consoleLogPath(options.runDir)})`, [consoleLogPath(options.runDir)]);
  }
  const state: NspawnState = {
    engine: "nspawn",
    ...commonState(options),
    startedAt: new Date().toISOString(),
    rootfs,
    nspawn: { pid, startTime: stat.startTime },
    pid1: null,
    cgroupDirs: launchCgroupDirs(host, options.name),
    mountedCgroup2: mounted,
  };
  // Saved before anything can fail, so `down` finds a container that never got ready.
  saveState(state);
  const machine = new NspawnMachine(state);
  await machine.findPid1(options.bootTimeoutMs);
  return machine;
}

export class NspawnMachine implements Machine {
  readonly engine = "nspawn" as const;
  readonly state: NspawnState;

  constructor(state: NspawnState) {
    this.state = state;
  }

  get name(): string {
    return this.state.name;
  }

  /**
   * The container's systemd is nspawn's child. It is found by pid and its
   * name, since just after fork the child is still nspawn itself.
   */
  async findPid1(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const { pid } = this.state.nspawn;
    for (;;) {
      if (!isSameProcess(this.state.nspawn)) {
        throw this.bootFailure("systemd-nspawn exited before the container's systemd started");
      }
      for (const child of childPids(pid)) {
        const stat = readProcStat(child);
        if (stat && stat.comm === "systemd") {
          this.state.pid1 = { pid: child, startTime: stat.startTime };
          saveState(this.state);
          return;
        }
      }
      if (Date.now() >= deadline) throw this.bootFailure(`no systemd inside after ${timeoutMs / 1000} s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  private bootFailure(what: string): ContainerError {
    const log = consoleLogPath(this.state.runDir);
    const tail = existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").slice(-1)[0] ?? "" : "";
    return new ContainerError("boot-failed", `${what}${tail ? `: ${tail}` : ""}`, [log]);
  }

  async enter(argv: string[], options: EnterOptions): Promise<CommandResult> {
    const pid1 = this.state.pid1;
    // Enter only the very process we found: a reused pid would put the command in someone else's namespaces.
    if (pid1 === null || !isSameProcess(pid1)) {
      return { exitCode: null, signal: null, stdout: "", stderr: `container ${this.name} is not running`, timedOut: false };
    }
    const as = options.as ? ["-S", String(options.as.uid), "-G", String(options.as.gid)] : [];
    return runCommand(["nsenter", "-t", String(pid1.pid), "-a", ...as, "--", "env", "-i", INSIDE_PATH, ...argv], {
      timeoutMs: options.timeoutMs,
      input: options.input,
    });
  }

  async isAlive(): Promise<boolean> {
    return isSameProcess(this.state.nspawn);
  }

  /** PID 1 has stopped every unit and exec'd systemd-shutdown (same pid and start time; the kernel keeps 15 characters of its name). */
  private inFinalStage(): boolean {
    const pid1 = this.state.pid1;
    return pid1 !== null && isSameProcess(pid1) && readProcStat(pid1.pid)?.comm === "systemd-shutdow";
  }

  /**
   * SIGTERM makes nspawn ask the container's systemd to power off; what is
   * still there after the bound is killed through the launch cgroup. Then
   * the cgroups nspawn made (v2 and the legacy name=systemd mirror) are
   * removed deepest first, and nothing may stay mounted under the rootfs.
   *
   * Once every unit is stopped, PID 1 execs systemd-shutdown. In systemd 252
   * (bookworm) that last stage often sat 10 s in a wait for its sync child,
   * which had long exited (seen in about half the teardowns here, with
   * nothing else left in the container). So when PID 1 has been
   * systemd-shutdown for `finalStageMs`, nspawn gets its second SIGTERM,
   * which ends the container at once; the orderly part is over by then.
   */
  async stop(timeoutMs: number, finalStageMs = 1000): Promise<TeardownReport> {
    const started = Date.now();
    let stopped: TeardownReport["stopped"] = "gone";
    let halt: TeardownReport["halt"];
    if (isSameProcess(this.state.nspawn)) {
      process.kill(this.state.nspawn.pid, "SIGTERM");
      halt = { boundMs: timeoutMs, stageAtBound: null };
      let finalSince: number | null = null;
      let nudged = false;
      const nudge = () => {
        if (nudged || !this.inFinalStage()) return;
        finalSince ??= Date.now();
        if (Date.now() - finalSince < finalStageMs || !isSameProcess(this.state.nspawn)) return;
        nudged = true;
        process.kill(this.state.nspawn.pid, "SIGTERM");
      };
      stopped = (await waitGone(this.state.nspawn, timeoutMs, nudge)) ? "halted" : "killed";
      if (stopped === "killed") {
        const pid1 = this.state.pid1;
        halt.stageAtBound = (pid1 && isSameProcess(pid1) && readProcStat(pid1.pid)?.comm) || "gone";
        // nspawn itself is not in the container's cgroups killed below: a halt that overran leaves it running.
        if (isSameProcess(this.state.nspawn)) process.kill(this.state.nspawn.pid, "SIGKILL");
        await waitGone(this.state.nspawn, 5_000);
      }
    }
    const leftovers: string[] = [];
    const pid1 = stopped === "killed" ? this.state.pid1 : null;
    if (pid1 && isSameProcess(pid1)) {
      // Seen on a loaded machine: after a halt that overran, the container's PID 1 (systemd-shutdown) outlived
      // nspawn; probably still in its final sync, where a kill lands only once the call returns. Kill it and
      // wait (bounded) before calling the teardown done.
      process.kill(pid1.pid, "SIGKILL");
      if (!(await waitGone(pid1, 20_000))) leftovers.push(`the container's PID 1 (${pid1.pid}, ${readProcStat(pid1.pid)?.state ?? "?"})`);
    }
    for (const dir of this.state.cgroupDirs) {
      if (cgroupPids(dir).length > 0) {
        stopped = stopped === "gone" ? "killed" : stopped;
        killCgroupTree(dir);
        if (!(await waitCgroupEmpty(dir, 10_000))) leftovers.push(...cgroupPids(dir).map((p) => `pid ${p} in ${dir}`));
      }
    }
    // Legacy hierarchies have no cgroup.kill; the v2 kill above emptied them, give the kernel a moment to notice.
    for (const dir of this.state.cgroupDirs) await waitCgroupEmpty(dir, 2_000);
    for (const dir of this.state.cgroupDirs) leftovers.push(...removeCgroupTree(dir).map((d) => `cgroup ${d}`));
    leftovers.push(...mountsUnder(this.state.rootfs).map((m) => `mount ${m}`));
    leftovers.push(...(await releaseCgroup2Mount(this.state.mountedCgroup2 ?? null)));
    removePropagateDir(this.name);
    const clean = leftovers.length === 0;
    if (clean) markStopped(this.state);
    return { stopped, leftovers, clean, ms: Date.now() - started, ...(halt ? { halt } : {}) };
  }
}

function waitGone(identity: { pid: number; startTime: string }, timeoutMs: number, eachPoll: () => void = () => {}): Promise<boolean> {
  return waitUntil(() => {
    if (!isSameProcess(identity)) return true;
    eachPoll();
    return false;
  }, timeoutMs, 50);
}

/**
 * nspawn keeps a per-machine directory for mount propagation under /run;
 * where /run is on disk (as here) it refuses to remove it itself. Only an
 * empty directory is removed: anything else is not ours to delete.
 */
function removePropagateDir(name: string): void {
  const dir = join("/run/systemd/nspawn/propagate", name);
  try {
    rmdirSync(dir);
  } catch {
    // Absent (the usual case) or not empty: leave it.
  }
}
