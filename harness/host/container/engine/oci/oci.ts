import { existsSync } from "node:fs";
import { runCommand, type CommandResult } from "../../command.ts";
import { ContainerError } from "../../errors.ts";
import { npmDirBeside } from "../../host-checks/npm-beside.ts";
import type { Engine, EnterOptions, Machine, TeardownReport } from "../../machine.ts";
import { removeLibpodCgroups } from "./oci-cgroups.ts";
import { engineEnv, ociBinary, type OciEngine, probeOci } from "./oci-engine.ts";
import { ensureOciImage } from "./oci-image.ts";
import type { ResolvedOptions } from "../../options.ts";
import { rootfsEngineMissing } from "../../host-checks/preconditions.ts";
import type { Log } from "../../image/rootfs.ts";
import { commonState, type CommonState, markStopped, saveState } from "../../state.ts";

export { probeOci, type OciEngine } from "./oci-engine.ts";

export interface OciState extends CommonState {
  engine: OciEngine;
  containerId: string;
  /** Where container/containers.conf is read from for every engine command. */
  projectDir: string;
  /** The client binary (`ociCommand`, default the engine's name). */
  command: string;
}

/**
 * podman or docker: the same debootstrapped rootfs imported as an image
 * (`container/Containerfile` built on it), booted `--privileged` with
 * systemd as PID 1; the container gets the host's cgroup layout.
 */
function ociEngine(engine: OciEngine): Engine {
  return {
    async missing(nodePath, projectDir) {
      // podman and docker boot an image made from the same debootstrapped rootfs.
      const why = await rootfsEngineMissing([["debootstrap", "debootstrap"]], nodePath);
      if (why !== null) return why;
      const probe = await probeOci(engine, projectDir);
      return probe.ok ? null : probe.reason;
    },
    async boot(options, log) {
      const probe = await probeOci(engine, options.projectDir, options.ociCommand ?? engine);
      if (!probe.ok) throw new ContainerError("no-engine", probe.reason);
      // The image (built once, then cached) is not part of the boot time.
      const machine = await bootOci(engine, options, log);
      return { machine, launchedAt: Date.parse(machine.state.startedAt) };
    },
    attach: (state) => new OciMachine(state as OciState),
  };
}

export const podmanEngine = ociEngine("podman");
export const dockerEngine = ociEngine("docker");

const INSIDE_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * The run flags; pure, so they can be checked without an engine. Run with
 * podman 4.3 on a hybrid-cgroup Debian 12 host; docker takes the same flags
 * (--systemd aside) but was not run here.
 */
export function ociRunArgv(engine: OciEngine, options: ResolvedOptions, tag: string): string[] {
  return [
    ociBinary(engine, options), "run", "--detach",
    "--name", options.name,
    "--hostname", options.name,
    "--label", `outlive.harness=${options.name}`,
    // systemd as PID 1 must manage cgroups and mount file systems.
    "--privileged",
    // Scenarios talk to nothing outside; no network also means no bridge or firewall rules left on the host.
    "--network=none",
    // What systemd takes as "power off"; the engine's default SIGTERM only makes it re-execute.
    "--stop-signal", "SIGRTMIN+3",
    // podman mounts /run, /run/lock and /tmp as tmpfs itself with --systemd; docker needs them asked for.
    ...(engine === "podman" ? ["--systemd=always"] : ["--cgroupns=private", "--tmpfs", "/run", "--tmpfs", "/run/lock", "--tmpfs", "/tmp"]),
    "--volume", `${options.nodePath}:/usr/local/bin/node:ro`,
    // npm where the official images keep it, as nspawn binds it: scenarios run MCP servers through npx.
    ...npmVolume(options.nodePath),
    "--volume", `${options.projectDir}:/work/project`,
    // Extra binds a caller asked for (a user's module outside the project).
    ...options.binds.flatMap((b) => ["--volume", `${b.host}:${b.inside}`]),
    tag,
    "/sbin/init",
  ];
}

function npmVolume(nodePath: string): string[] {
  const npm = npmDirBeside(nodePath);
  return npm ? ["--volume", `${npm}:/usr/local/lib/node_modules/npm:ro`] : [];
}

export async function bootOci(engine: OciEngine, options: ResolvedOptions, log: Log): Promise<OciMachine> {
  const tag = await ensureOciImage(engine, options, log);
  const run = await runCommand(ociRunArgv(engine, options, tag), { timeoutMs: 60_000, env: engineEnv(engine, options.projectDir) });
  const containerId = run.stdout.trim().split("\n").at(-1) ?? "";
  const state: OciState = {
    engine,
    ...commonState(options),
    // The engine gives the container the host's cgroup layout; nspawn's unified switch has no equivalent.
    unified: existsSync("/sys/fs/cgroup/cgroup.controllers"),
    startedAt: new Date().toISOString(),
    containerId: run.exitCode === 0 ? containerId : options.name,
    projectDir: options.projectDir,
    command: ociBinary(engine, options),
  };
  saveState(state);
  const machine = new OciMachine(state);
  if (run.exitCode !== 0) {
    // A container may exist (created, not started): remove it and its cgroups before saying why.
    await machine.stop(options.stopTimeoutMs);
    throw new ContainerError("boot-failed", `${engine} run failed: ${run.stderr.trim().split("\n").at(-1) ?? ""}`);
  }
  return machine;
}

export class OciMachine implements Machine {
  readonly state: OciState;

  constructor(state: OciState) {
    this.state = state;
  }

  get engine(): OciEngine {
    return this.state.engine;
  }

  get name(): string {
    return this.state.name;
  }

  private run(argv: string[], options: { timeoutMs: number; input?: string }): Promise<CommandResult> {
    return runCommand([this.state.command, ...argv], { ...options, env: engineEnv(this.engine, this.state.projectDir) });
  }

  enter(argv: string[], options: EnterOptions): Promise<CommandResult> {
    const as = options.as ? ["--user", `${options.as.uid}:${options.as.gid}`] : [];
    const stdin = options.input !== undefined ? ["--interactive"] : [];
    return this.run(["exec", ...stdin, ...as, this.state.containerId, "env", "-i", INSIDE_PATH, ...argv], options);
  }

  async isAlive(): Promise<boolean> {
    const r = await this.run(["inspect", "--format", "{{.State.Running}}", this.state.containerId], { timeoutMs: 10_000 });
    return r.stdout.trim() === "true";
  }

  /** Stops (systemd powers off on SIGRTMIN+3), removes the container, then the cgroups podman leaves on the host. */
  async stop(timeoutMs: number): Promise<TeardownReport> {
    const started = Date.now();
    const wasAlive = await this.isAlive();
    const seconds = String(Math.ceil(timeoutMs / 1000));
    const stop = wasAlive ? await this.run(["stop", "--time", seconds, this.state.containerId], { timeoutMs: timeoutMs + 10_000 }) : null;
    await this.run(["rm", "--force", this.state.containerId], { timeoutMs: 30_000 });
    const left = await this.run(["ps", "--all", "--quiet", "--filter", `name=^${this.state.name}$`], { timeoutMs: 10_000 });
    const leftovers = left.stdout.trim() ? [`${this.engine} container ${this.state.name}`] : [];
    if (this.engine === "podman") {
      // The 64-hex id names the cgroups; a run that failed before printing one made none.
      if (/^[0-9a-f]{64}$/.test(this.state.containerId)) leftovers.push(...removeLibpodCgroups(this.state.containerId).map((d) => `cgroup ${d}`));
    }
    const clean = leftovers.length === 0;
    if (clean) markStopped(this.state);
    return { stopped: !wasAlive ? "gone" : stop?.exitCode === 0 ? "halted" : "killed", leftovers, clean, ms: Date.now() - started };
  }

}
