import { spawnSync } from "node:child_process";

/**
 * `argv` run as if systemd ran this host, whatever runs it: in a mount
 * namespace of its own (`unshare -m`, private propagation) a tmpfs over
 * `/run` holds an empty `/run/systemd/system`, which is what sd_booted(3),
 * outlive-shim and the shell wrapper look at, and nothing else: no system bus
 * socket, so a task that asks whether the host is stopping asks the first
 * `systemctl` on PATH. What `argv` starts (a spawner, a task's shim) stays in
 * that namespace; the mounts go with it when its last process ends.
 */
export function asIfSystemdRuns(argv: string[]): string[] {
  const setUp = "mount -t tmpfs outlive-run /run && mkdir -p /run/systemd/system || exit 97";
  return ["unshare", "-m", "--propagation", "private", "sh", "-c", `${setUp}; exec "$@"`, "systemd-host", ...argv];
}

/** Why {@link asIfSystemdRuns} cannot be had here (not root, no unshare, a mount refused), or null when it works. */
export function systemdHostMissing(): string | null {
  if (process.getuid?.() !== 0) return "a mount namespace with a tmpfs over /run needs root";
  const [program, ...args] = asIfSystemdRuns(["sh", "-c", "[ -d /run/systemd/system ] && [ ! -e /run/dbus ] && echo seen"]);
  const r = spawnSync(program, args, { encoding: "utf8", timeout: 30_000 });
  if (r.error) return `unshare cannot be run: ${r.error.message}`;
  if (r.status === 97) return `a tmpfs over /run was refused: ${r.stderr.trim()}`;
  if (r.stdout.trim() !== "seen") return `inside the namespace /run/systemd/system was not seen (${(r.stdout + r.stderr).trim()})`;
  return null;
}
