import { join } from "node:path";
import { runCommand } from "../../command.ts";
import { findTool } from "../../host-checks/preconditions.ts";

/** docker and podman share every CLI verb the harness uses. */
export type OciEngine = "docker" | "podman";

/**
 * The environment every engine command gets. podman reads the project's
 * container/containers.conf (runc, no raised ulimits, cgroupfs), so a host
 * needs no edits under /etc; docker ignores the variable.
 */
export function engineEnv(engine: OciEngine, projectDir: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  if (engine === "podman") env.CONTAINERS_CONF = join(projectDir, "container", "containers.conf");
  return env;
}

/** The client binary: the `ociCommand` option, else the engine's name. */
export function ociBinary(engine: OciEngine, options: { ociCommand: string | null }): string {
  return options.ociCommand ?? engine;
}

/** Whether the engine can run containers at all; a client with no daemon behind it cannot. */
export async function probeOci(engine: OciEngine, projectDir: string, command: string = engine): Promise<{ ok: boolean; reason: string }> {
  if ((await findTool(command)) === null) {
    const hint = engine === "podman" ? "apt-get install podman runc, or container/install-deps.sh" : "install docker and start its daemon";
    return { ok: false, reason: `${command} is not installed or not on PATH (${hint})` };
  }
  if (engine === "podman" && (await findTool("runc")) === null) {
    return { ok: false, reason: "podman needs runc here (container/containers.conf selects it): apt-get install runc" };
  }
  // The harness runs engines rootful (--privileged, the host's cgroups). Asked as another user, podman
  // would start a rootless pause process of that user's that outlives the probe.
  if (typeof process.getuid === "function" && process.getuid() !== 0) {
    return { ok: false, reason: `needs root (uid 0): the harness runs ${engine} rootful` };
  }
  const info = await runCommand([command, "info", "--format", "{{json .}}"], { timeoutMs: 10_000, env: engineEnv(engine, projectDir) });
  if (info.timedOut) return { ok: false, reason: `${engine} info did not answer within 10 s` };
  if (info.exitCode !== 0) {
    const why = info.stderr.trim().split("\n").at(-1) ?? "";
    return { ok: false, reason: `${engine} is installed but cannot run containers (${why})` };
  }
  return { ok: true, reason: `${engine} answers` };
}
