import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runCommand, type CommandResult } from "../../command.ts";
import { ContainerError } from "../../errors.ts";
import type { Engine, EnterOptions, Machine, TeardownReport } from "../../machine.ts";
import type { ResolvedOptions } from "../../options.ts";
import { requireRoot, requireTool } from "../../host-checks/preconditions.ts";
import { commonState, type CommonState, markStopped, saveState } from "../../state.ts";

export interface HostState extends CommonState {
  engine: "host";
  /** What the harness changed on the host, so teardown undoes exactly that. */
  createdUser: boolean;
  enabledLinger: boolean;
}

/**
 * The host engine: no container, this machine's own systemd (a CI VM, a
 * privileged systemd container). Never picked by `auto`; it runs once, on
 * the host's systemd version.
 */
export const hostEngine: Engine = {
  missing: () => hostEngineMissing(),
  async boot(options) {
    const launchedAt = Date.now();
    return { machine: await bootHost(options), launchedAt };
  },
  attach: (state) => new HostMachine(state as HostState),
};

const CLEAN_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const LINGER_DIR = "/var/lib/systemd/linger";

/** Why this host cannot be the machine, or null: PID 1 must be systemd and answer. Cheap; changes nothing. */
export async function hostEngineMissing(): Promise<string | null> {
  if (typeof process.getuid === "function" && process.getuid() !== 0) return "the host engine needs root (uid 0): it runs units as the test user through the host's systemd";
  const comm = readPid1Comm();
  if (comm !== "systemd") return `PID 1 here is ${comm ?? "unreadable"}, not systemd: the host engine needs a systemd host (a CI VM, a privileged systemd container); use --engine nspawn or podman`;
  const r = await runCommand(["systemctl", "is-system-running"], { timeoutMs: 10_000 });
  const state = r.stdout.trim();
  if (!["running", "degraded", "starting"].includes(state)) return `the host's systemd says ${state || r.stderr.trim() || "nothing"}, not running`;
  return null;
}

function readPid1Comm(): string | null {
  try {
    return readFileSync("/proc/1/comm", "utf8").trim();
  } catch {
    return null;
  }
}

/**
 * The host engine: this machine's own systemd, no container. The test user
 * is made (and lingering enabled) if it is not there, and teardown undoes
 * exactly what was made; everything a scenario starts runs as units of the
 * host's managers, which the scenarios' own cleanup removes.
 */
export async function bootHost(options: ResolvedOptions): Promise<HostMachine> {
  const missing = await hostEngineMissing();
  if (missing) throw new ContainerError(missing.startsWith("the host engine needs root") ? "not-root" : "no-engine", missing);
  requireRoot();
  await requireTool("loginctl", "systemd");
  const state: HostState = {
    engine: "host",
    ...commonState({ ...options, suite: "host", unified: existsSync("/sys/fs/cgroup/cgroup.controllers") }, options.projectDir),
    startedAt: new Date().toISOString(),
    createdUser: false,
    enabledLinger: false,
  };
  const entry = await runCommand(["getent", "passwd", options.user], { timeoutMs: 10_000 });
  if (entry.exitCode === 0) {
    const uid = Number(entry.stdout.split(":")[2]);
    if (uid !== options.uid) {
      throw new ContainerError("bad-option", `the host has a user ${options.user} with uid ${uid}, not ${options.uid}: pass uid ${uid} or another user name`);
    }
  } else {
    const owner = await runCommand(["getent", "passwd", String(options.uid)], { timeoutMs: 10_000 });
    if (owner.exitCode === 0) {
      throw new ContainerError("bad-option", `uid ${options.uid} belongs to ${owner.stdout.split(":")[0]} on this host, not ${options.user}: pass that user name or a free uid`);
    }
    const add = await runCommand(["useradd", "--uid", String(options.uid), "--user-group", "--create-home", "--shell", "/bin/sh", options.user], { timeoutMs: 30_000 });
    if (add.exitCode !== 0) throw new ContainerError("boot-failed", `useradd ${options.user} failed: ${add.stderr.trim()}`);
    state.createdUser = true;
  }
  saveState(state);
  if (!existsSync(join(LINGER_DIR, options.user))) {
    const linger = await runCommand(["loginctl", "enable-linger", options.user], { timeoutMs: 30_000 });
    if (linger.exitCode !== 0) throw new ContainerError("boot-failed", `loginctl enable-linger ${options.user} failed: ${linger.stderr.trim()}`);
    state.enabledLinger = true;
    saveState(state);
  }
  return new HostMachine(state);
}

export class HostMachine implements Machine {
  readonly engine = "host" as const;
  readonly state: HostState;

  constructor(state: HostState) {
    this.state = state;
  }

  get name(): string {
    return this.state.name;
  }

  /** Runs on the host itself; `as` drops to that uid/gid with no supplementary groups, like nsenter -S/-G. */
  enter(argv: string[], options: EnterOptions): Promise<CommandResult> {
    const as = options.as ? ["setpriv", `--reuid=${options.as.uid}`, `--regid=${options.as.gid}`, "--clear-groups", "--"] : [];
    return runCommand(["env", "-i", CLEAN_PATH, ...as, ...argv], { timeoutMs: options.timeoutMs, input: options.input });
  }

  async isAlive(): Promise<boolean> {
    return readPid1Comm() === "systemd";
  }

  /** Undoes what boot changed: lingering off (the user manager stops), the user removed if the harness made it. */
  async stop(timeoutMs: number): Promise<TeardownReport> {
    const started = Date.now();
    const leftovers: string[] = [];
    if (this.state.enabledLinger) {
      const r = await runCommand(["loginctl", "disable-linger", this.state.user], { timeoutMs });
      if (r.exitCode !== 0) leftovers.push(`lingering of ${this.state.user} (${r.stderr.trim()})`);
    }
    if (this.state.createdUser) {
      await runCommand(["systemctl", "stop", `user@${this.state.uid}.service`], { timeoutMs });
      const r = await runCommand(["userdel", "--remove", this.state.user], { timeoutMs: 30_000 });
      if (r.exitCode !== 0) leftovers.push(`user ${this.state.user} (${r.stderr.trim()})`);
    }
    const clean = leftovers.length === 0;
    if (clean) markStopped(this.state);
    return { stopped: "halted", leftovers, clean, ms: Date.now() - started };
  }
}
