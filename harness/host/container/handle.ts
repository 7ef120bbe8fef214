import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ContainerError } from "./errors.ts";
import type { Machine, RebootHow, TeardownReport } from "./machine.ts";
import type { EngineName } from "./engine-names.ts";
import { type Readiness, waitUntilReady } from "./readiness.ts";
import type { CommonState } from "./state.ts";
import { execUnitName, startedRunArgv, startedUserRunArgv, waitedRunArgv } from "./systemd-run.ts";

export interface ExecOptions {
  /** Run as the unprivileged user (with XDG_RUNTIME_DIR set) instead of root. Default false. */
  user?: boolean;
  env?: Record<string, string>;
  /** Working directory inside. Default the project (`info.projectInside`). */
  cwd?: string;
  /** Bound on the command; systemd also ends the unit at this bound. Default 60 s. */
  timeoutMs?: number;
  /** Given to the command's stdin; default none (stdin is /dev/null). */
  input?: string;
}

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** The unit it ran as, for `journal({ unit })`. */
  unit: string;
}

export interface StartOptions {
  /** `system` (default): a service of the container's systemd; `user`: a service of user@UID.service. */
  manager?: "system" | "user";
  /** With manager `system`: run as the unprivileged user. Default false. */
  user?: boolean;
  env?: Record<string, string>;
  /** Default the project (`info.projectInside`). */
  cwd?: string;
  /** systemd ends the service after this many seconds. Default none. */
  runtimeMaxSec?: number;
  /** Extra systemd properties (`-p`), e.g. `KillMode=mixed`. */
  properties?: string[];
}

export interface JournalOptions {
  /** Only this system unit (or user unit with `user: true`). */
  unit?: string;
  user?: boolean;
}

/** Facts about the running container: what every engine's state holds (runDir: console log, kept journals, state), and its readiness. */
export interface ContainerInfo extends Omit<CommonState, "startedAt" | "readiness"> {
  engine: EngineName;
  readiness: Readiness;
}

const DEFAULT_EXEC_TIMEOUT_MS = 60_000;
/** How long systemd lets an exec unit outlive its host-side bound (in case the harness itself died). */
const SLACK_MS = 5_000;

let execCounter = 0;

/**
 * A booted container. Everything runs through the container's own systemd,
 * so processes land in its cgroup tree; `teardown` leaves nothing behind.
 */
export class ContainerHandle {
  readonly info: ContainerInfo;
  readonly machine: Machine;

  constructor(machine: Machine, info: ContainerInfo) {
    this.machine = machine;
    this.info = info;
  }

  /**
   * Runs argv to completion as a transient unit and returns its exit code
   * and output. Throws `exec-timeout` (after stopping the unit) when it
   * outlives `timeoutMs`.
   */
  async exec(argv: string[], options: ExecOptions = {}): Promise<ExecResult> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS;
    const unit = execUnitName(++execCounter);
    const spec = {
      unit,
      argv,
      runAs: options.user ? { user: this.info.user, uid: this.info.uid } : undefined,
      env: options.env,
      cwd: options.cwd ?? this.info.projectInside,
      // A backstop only: the host-side bound fires first, and then the unit is stopped explicitly.
      runtimeMaxSec: Math.ceil((timeoutMs + SLACK_MS) / 1000),
    };
    const r = await this.machine.enter(waitedRunArgv(spec), { timeoutMs, input: options.input });
    if (r.timedOut || (r.exitCode === null && r.signal === null)) {
      await this.machine.enter(["systemctl", "stop", `${unit}.service`], { timeoutMs: 10_000 });
      if (r.timedOut) throw new ContainerError("exec-timeout", `${argv.join(" ")} did not finish within ${timeoutMs} ms in ${this.info.name}`);
      throw new ContainerError("not-running", `cannot run ${argv[0]} in ${this.info.name}: ${r.stderr.trim()}`);
    }
    return { exitCode: r.exitCode ?? 128, stdout: r.stdout, stderr: r.stderr, unit: `${unit}.service` };
  }

  /** Whether this machine can be rebooted under a scenario (`reboot`): only the vm engine's can. */
  get canReboot(): boolean {
    return typeof this.machine.reboot === "function";
  }

  /**
   * Reboots the machine (`power-cut` or `clean`) and waits until systemd and
   * the user manager are running again; `info.readiness` is then the new
   * boot's, `issuedAt` when the reset or reboot was sent, and `resets` why
   * any further reset was needed (a new boot that stalled). Throws `bad-option` on an engine that cannot.
   */
  async reboot(how: RebootHow, timeoutMs: number): Promise<{ readiness: Readiness; issuedAt: number; resets: string[] }> {
    if (!this.machine.reboot) throw new ContainerError("bad-option", `the ${this.info.engine} engine cannot reboot its machine (only --engine vm can)`);
    const started = Date.now();
    const { issuedAt, resets = [] } = await this.machine.reboot(how, timeoutMs);
    const readiness = await waitUntilReady(this.machine, this.info.uid, Math.max(10_000, timeoutMs - (Date.now() - started)), started);
    this.info.readiness = readiness;
    return { readiness, issuedAt, resets };
  }

  /** Readies a reboot that is to come (see Machine.prepareReboot); a no-op on an engine with nothing to ready. */
  async prepareReboot(): Promise<void> {
    await this.machine.prepareReboot?.();
  }

  /** Undoes prepareReboot once no reboot is to come (see Machine.endReboots); a no-op on an engine with nothing to undo. */
  async endReboots(): Promise<void> {
    await this.machine.endReboots?.();
  }

  /** `exec(["/bin/sh", "-c", script])`, for the many small checks scenarios make. */
  shell(script: string, options: ExecOptions = {}): Promise<ExecResult> {
    return this.exec(["/bin/sh", "-c", script], options);
  }

  /**
   * Starts a long-lived process as `unitName.service` and returns that name
   * once systemd has accepted it (not when it ends).
   */
  async start(unitName: string, argv: string[], options: StartOptions = {}): Promise<string> {
    const spec = {
      unit: unitName,
      argv,
      env: options.env,
      cwd: options.cwd ?? this.info.projectInside,
      runtimeMaxSec: options.runtimeMaxSec,
      properties: options.properties,
    };
    const r = options.manager === "user"
      ? await this.machine.enter(startedUserRunArgv(spec, this.info.uid), {
        timeoutMs: 15_000,
        as: { uid: this.info.uid, gid: this.info.uid },
      })
      : await this.machine.enter(
        startedRunArgv({ ...spec, runAs: options.user ? { user: this.info.user, uid: this.info.uid } : undefined }),
        { timeoutMs: 15_000 },
      );
    if (r.exitCode !== 0) {
      throw new ContainerError("not-running", `could not start ${unitName} in ${this.info.name} (exit ${r.exitCode}): ${r.stderr.trim()}`);
    }
    return `${unitName}.service`;
  }

  /** The journal of this boot, as text (all of it, or one unit's). */
  async journal(options: JournalOptions = {}): Promise<string> {
    // Root's `--user-unit` also matches `_UID=0` and so finds nothing; match the user unit's fields directly.
    const filter = !options.unit ? [] : options.user
      ? [`_SYSTEMD_USER_UNIT=${options.unit}`, "+", `USER_UNIT=${options.unit}`]
      : ["--unit", options.unit];
    const r = await this.machine.enter(["journalctl", "--boot", "--no-pager", "--output=short-precise", ...filter], {
      timeoutMs: 30_000,
    });
    return r.stdout;
  }

  /** Writes the journal into the run dir (it survives teardown there) and returns the path. */
  async keepJournal(fileName = "journal.txt"): Promise<string> {
    const path = join(this.info.runDir, fileName);
    writeFileSync(path, await this.journal());
    return path;
  }

  /** Stops the container and removes everything it left on the host; see the report's `leftovers` if not `clean`. */
  async teardown(timeoutMs = 15_000): Promise<TeardownReport> {
    return this.machine.stop(timeoutMs);
  }
}
