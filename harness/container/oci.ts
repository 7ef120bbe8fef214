import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runCommand, type CommandResult } from "./command.ts";
import { ContainerError } from "./errors.ts";
import type { EnterOptions, Machine, TeardownReport } from "./machine.ts";
import type { ResolvedOptions } from "./options.ts";
import { findTool } from "./preconditions.ts";
import { markStopped, saveState, type OciState, commonState } from "./state.ts";

/**
 * docker and podman, which share the CLI verbs used here. Not exercised on
 * the machine this was written on (no engine answers there); the flags are
 * the ones environment.md records as working with podman on a hybrid host.
 */
export type OciEngine = "docker" | "podman";

/** Whether the engine can run containers at all; a client with no daemon behind it cannot. */
export async function probeOci(engine: OciEngine): Promise<{ ok: boolean; reason: string }> {
  if ((await findTool(engine)) === null) return { ok: false, reason: `${engine} is not installed (${engine === "podman" ? "apt-get install podman runc" : "install docker and start its daemon"}; see container/README.md)` };
  const info = await runCommand([engine, "info", "--format", "{{json .}}"], { timeoutMs: 10_000 });
  if (info.timedOut) return { ok: false, reason: `${engine} info did not answer within 10 s` };
  if (info.exitCode !== 0) {
    const why = info.stderr.trim().split("\n").at(-1) ?? "";
    return { ok: false, reason: `${engine} is installed but cannot run containers (${why})` };
  }
  return { ok: true, reason: `${engine} answers` };
}

/** Image tag keyed by the Containerfile and the setup script, like the rootfs cache. */
export function imageTag(options: ResolvedOptions): string {
  const hash = createHash("sha256");
  for (const file of ["Containerfile", "rootfs-setup.sh"]) hash.update(readFileSync(join(options.projectDir, "container", file)));
  hash.update(JSON.stringify([options.suite, options.user, options.uid]));
  return `localhost/outlive-test:${options.suite}-${hash.digest("hex").slice(0, 12)}`;
}

async function ensureImage(engine: OciEngine, options: ResolvedOptions): Promise<string> {
  const tag = imageTag(options);
  if ((await runCommand([engine, "image", "inspect", tag], { timeoutMs: 15_000 })).exitCode === 0) return tag;
  const build = await runCommand(
    [
      engine, "build",
      "--file", join(options.projectDir, "container", "Containerfile"),
      "--build-arg", `SUITE=${options.suite}`,
      "--build-arg", `USER_NAME=${options.user}`,
      "--build-arg", `USER_UID=${options.uid}`,
      "--tag", tag,
      join(options.projectDir, "container"),
    ],
    { timeoutMs: options.buildTimeoutMs },
  );
  if (build.exitCode !== 0) {
    const why = `${build.stdout}${build.stderr}`.trim().split("\n").at(-1) ?? "";
    throw new ContainerError("build-failed", `${engine} build of ${tag} failed (${build.timedOut ? "timed out" : why}); it needs the debian:${options.suite} and node:20 images`);
  }
  return tag;
}

/** The run flags container/README.md documents for cgroup v2 hosts. */
export function ociRunArgv(engine: OciEngine, options: ResolvedOptions, tag: string): string[] {
  return [
    engine, "run", "--detach",
    "--name", options.name,
    "--hostname", options.name,
    // systemd as PID 1 must manage cgroups and mount file systems.
    "--privileged",
    // What systemd takes as "power off"; the engine's default SIGTERM only makes it re-execute.
    "--stop-signal", "SIGRTMIN+3",
    "--cgroupns", "private",
    "--tmpfs", "/run", "--tmpfs", "/run/lock", "--tmpfs", "/tmp",
    "--volume", `${options.projectDir}:/work/project`,
    ...options.binds.flatMap((b) => ["--volume", `${b.host}:${b.inside}`]),
    ...(engine === "podman" ? ["--systemd", "always"] : []),
    tag,
  ];
}

export async function bootOci(engine: OciEngine, options: ResolvedOptions): Promise<OciMachine> {
  const tag = await ensureImage(engine, options);
  const run = await runCommand(ociRunArgv(engine, options, tag), { timeoutMs: 60_000 });
  if (run.exitCode !== 0) {
    throw new ContainerError("boot-failed", `${engine} run failed: ${run.stderr.trim().split("\n").at(-1) ?? ""}`);
  }
  const state: OciState = {
    engine,
    ...commonState(options),
    startedAt: new Date().toISOString(),
    containerId: run.stdout.trim(),
  };
  saveState(state);
  return new OciMachine(state);
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

  enter(argv: string[], options: EnterOptions): Promise<CommandResult> {
    const as = options.as ? ["--user", `${options.as.uid}:${options.as.gid}`] : [];
    const stdin = options.input !== undefined ? ["--interactive"] : [];
    return runCommand([this.engine, "exec", ...stdin, ...as, this.state.containerId, "env", "-i", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", ...argv], {
      timeoutMs: options.timeoutMs,
      input: options.input,
    });
  }

  async isAlive(): Promise<boolean> {
    const r = await runCommand([this.engine, "inspect", "--format", "{{.State.Running}}", this.state.containerId], { timeoutMs: 10_000 });
    return r.stdout.trim() === "true";
  }

  async stop(timeoutMs: number): Promise<TeardownReport> {
    const started = Date.now();
    const wasAlive = await this.isAlive();
    const seconds = String(Math.ceil(timeoutMs / 1000));
    const stop = await runCommand([this.engine, "stop", "--time", seconds, this.state.containerId], { timeoutMs: timeoutMs + 10_000 });
    await runCommand([this.engine, "rm", "--force", this.state.containerId], { timeoutMs: 30_000 });
    const left = await runCommand([this.engine, "ps", "--all", "--quiet", "--filter", `id=${this.state.containerId}`], { timeoutMs: 10_000 });
    const leftovers = left.stdout.trim() ? [`${this.engine} container ${this.state.containerId}`] : [];
    const clean = leftovers.length === 0;
    if (clean) markStopped(this.state);
    return { stopped: !wasAlive ? "gone" : stop.exitCode === 0 ? "halted" : "killed", leftovers, clean, ms: Date.now() - started };
  }
}
