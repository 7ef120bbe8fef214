import { realpathSync } from "node:fs";
import { dirname } from "node:path";
import { runCommand, type CommandResult } from "../command.ts";
import { ContainerError } from "../errors.ts";
import { removeLibpodCgroups } from "../engine/oci/oci-cgroups.ts";
import { engineEnv, probeOci } from "../engine/oci/oci-engine.ts";
import { ensureOciImage } from "../engine/oci/oci-image.ts";
import { resolveOptions, type ContainerOptions } from "../options.ts";
import { findTool } from "./preconditions.ts";
import type { Log } from "../image/rootfs.ts";

/** Where the project is inside the job container, as in a GitLab job's checkout. */
export const JOB_PROJECT = "/work/project";

/** PID 1 of the job: waits, reaps, and ends on TERM. */
const JOB_PID1 = "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done";

export interface JobResult extends CommandResult {
  /** Whatever teardown could not remove (empty when clean). */
  leftovers: string[];
}

/**
 * The shape of a GitLab docker executor with `privileged = true`, made
 * locally with podman: a privileged container of a Debian image, PID 1 a
 * bash that only waits (no systemd; like the job's own shell it reaps the
 * orphans it inherits, which tests of pid reuse rely on: with a `sleep` as
 * PID 1 their zombies are never freed), the host's Node and npm bound in the way the
 * official node images have them, the network of the host (apt-get and
 * debootstrap run inside), the project at /work/project. Runs `script`
 * there with sh as root, then removes the container and its cgroups.
 */
export async function runInJobContainer(script: string, options: ContainerOptions & { timeoutMs: number }, log: Log = () => {}): Promise<JobResult> {
  const resolved = resolveOptions({ ...options, engine: "podman" });
  const probe = await probeOci("podman", resolved.projectDir);
  if (!probe.ok) throw new ContainerError("no-engine", probe.reason);
  const npm = await findTool("npm");
  if (npm === null) throw new ContainerError("missing-package", "npm is not installed on the host: the job container binds the host's");
  // .../lib/node_modules/npm/bin/npm-cli.js → .../lib/node_modules/npm
  const npmDir = dirname(dirname(realpathSync(npm)));
  const image = await ensureOciImage("podman", resolved, log);
  const name = `${resolved.name}-job`;
  // The cache may be a symlink out of the project (a shared cache): bind its target at the same path.
  const cacheTarget = realpathSync(resolved.cacheDir);
  const env = engineEnv("podman", resolved.projectDir);
  const run = await runCommand([
    "podman", "run", "--detach", "--name", name, "--privileged", "--network=host",
    "--volume", `${resolved.nodePath}:/usr/local/bin/node:ro`,
    "--volume", `${npmDir}:/usr/local/lib/node_modules/npm:ro`,
    "--volume", `${resolved.projectDir}:${JOB_PROJECT}`,
    // The cache lives outside the project (the user's cache directory): bound at the same path, and named to the job.
    "--volume", `${cacheTarget}:${cacheTarget}`, "--env", `OUTLIVE_CONTAINER_CACHE=${cacheTarget}`,
    // A node_modules linked out of the project (a git worktree's), where the link points, as every engine binds it.
    ...resolved.binds.flatMap((b) => ["--volume", `${b.host}:${b.inside}`]),
    image, "bash", "-c", JOB_PID1,
  ], { timeoutMs: 60_000, env });
  const id = run.stdout.trim();
  try {
    if (run.exitCode !== 0) throw new ContainerError("boot-failed", `podman run of the job container failed: ${run.stderr.trim()}`);
    const setup = "ln -sf ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && ln -sf ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx";
    const r = await runCommand([
      "podman", "exec", "--workdir", JOB_PROJECT, "--env", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "--env", "CI=true",
      name, "sh", "-c", `${setup} && ${script}`,
    ], { timeoutMs: options.timeoutMs, env });
    return { ...r, leftovers: await removeJob(name, id, env) };
  } catch (error) {
    await removeJob(name, id, env);
    throw error;
  }
}

async function removeJob(name: string, id: string, env: Record<string, string>): Promise<string[]> {
  await runCommand(["podman", "rm", "--force", "--time", "5", name], { timeoutMs: 60_000, env });
  const left = await runCommand(["podman", "ps", "--all", "--quiet", "--filter", `name=^${name}$`], { timeoutMs: 10_000, env });
  const leftovers = left.stdout.trim() ? [`podman container ${name}`] : [];
  if (/^[0-9a-f]{64}$/.test(id)) leftovers.push(...removeLibpodCgroups(id).map((d) => `cgroup ${d}`));
  return leftovers;
}
