import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

export interface NodeRelease {
  /** The binary. */
  path: string;
  /** Its `process.version`, e.g. `v24.22.3`. */
  version: string;
}

/**
 * The Node releases a test that runs outlive "under every Node CI tests"
 * runs it under: this one, and each binary named in `OUTLIVE_TEST_NODES`
 * (paths separated by `:`; `.ci/run` installs Node 22 and 24 from npm and
 * names them there). A named path that is missing is an error, not a skip:
 * CI asked for it.
 */
export function nodeReleases(): NodeRelease[] {
  const paths = [process.execPath, ...(process.env.OUTLIVE_TEST_NODES ?? "").split(":").filter(Boolean)];
  const seen = new Set<string>();
  const out: NodeRelease[] = [];
  for (const path of paths) {
    if (!existsSync(path)) throw new Error(`OUTLIVE_TEST_NODES names ${path}, which does not exist`);
    const version = execFileSync(path, ["-p", "process.version"], { encoding: "utf8" }).trim();
    if (seen.has(version)) continue;
    seen.add(version);
    out.push({ path, version });
  }
  return out;
}
