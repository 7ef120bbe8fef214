import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The release before this one: the last commit whose tasks ran under the
 * shell wrapper (`/bin/sh -c <wrapper>`) and whose spawner spoke revision 1
 * of its channel. Tests of the on-disk contract (test/compat/) run it beside
 * this checkout's build.
 */
export const PREVIOUS_RELEASE = "443e5b2";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** A build of the previous release, made from this repository's own history. */
export interface PreviousRelease {
  /** The full commit it was built from. */
  commit: string;
  /** Its checkout: `package.json`, `node_modules/`, `dist/`. */
  root: string;
  /** Its CLI, as `npm i -g` would run it (`dist/scripts/bin.js`). */
  cli: string;
  /** Its library's bundle, what `import "outlive"` loaded (`dist/pkg/outlive.js`). */
  lib: string;
}

export type PreviousReleaseBuild = { release: PreviousRelease; skip?: undefined } | { release?: undefined; skip: string };

function released(commit: string, root: string): PreviousRelease {
  return { commit, root, cli: join(root, "dist/scripts/bin.js"), lib: join(root, "dist/pkg/outlive.js") };
}

function run(file: string, args: string[], cwd: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, env: buildEnv() }, (error, out, err) => {
      if (error) reject(new Error(`${[file, ...args].join(" ")} failed in ${cwd}: ${error.message}\n${(out + err).slice(-3000)}`));
      else resolve();
    });
  });
}

/** npm's own variables of the `npm test` that runs these tests would steer the old tree's install; it gets none of them. */
function buildEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) && k !== "INIT_CWD") env[k] = v;
  return env;
}

/**
 * Builds the previous release from this repository's history (`git archive`,
 * its own lock file's `npm ci` from the npm cache, `npm run build`), once:
 * the build is kept in `.outlive-previous-release/<commit>/` at the
 * checkout's root (git ignores `.outlive-*`), keyed by the commit, so a CI
 * run pays for it once and a machine once per commit. Not under
 * `node_modules/.cache/`: tsc does not resolve a package's imports of its own
 * name (`outlive/harness`) in files below a `node_modules` folder, and the
 * old release's build has such imports. One process builds it at a time (a
 * lock directory beside it), in a directory of its own renamed into place
 * when whole, so a build cut short is never taken for one.
 * Returns why not, instead of throwing, where the history is not there (a
 * shallow clone) or the install fails (no npm cache, no registry).
 */
export async function buildPreviousRelease(log: (line: string) => void = () => {}): Promise<PreviousReleaseBuild> {
  let commit: string;
  try {
    commit = execFileSync("git", ["-C", ROOT, "rev-parse", "--verify", "--quiet", `${PREVIOUS_RELEASE}^{commit}`], { encoding: "utf8" }).trim();
  } catch {
    return { skip: `commit ${PREVIOUS_RELEASE} (the previous release) is not in this repository's history (a shallow clone, or no git): fetch it to run these tests` };
  }
  const cache = join(ROOT, ".outlive-previous-release", commit);
  const marker = join(cache, ".built");
  const cached = () => existsSync(marker) && readFileSync(marker, "utf8").trim() === commit && existsSync(released(commit, cache).cli);
  if (cached()) return { release: released(commit, cache) };
  // One build at a time: test files run in processes of their own, and the first to come builds it for all.
  const lock = `${cache}.lock`;
  mkdirSync(dirname(cache), { recursive: true });
  const waitedSince = Date.now();
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    if (cached()) return { release: released(commit, cache) };
    // A lock older than any build is a build cut short (its process killed): taken over.
    const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if (age > BUILD_WITHIN_MS) rmSync(lock, { recursive: true, force: true });
    else if (Date.now() - waitedSince > BUILD_WITHIN_MS) return { skip: `another process has been building ${PREVIOUS_RELEASE} for over ${BUILD_WITHIN_MS} ms (${lock})` };
    else await new Promise((r) => setTimeout(r, 500));
  }
  try {
    return cached() ? { release: released(commit, cache) } : await buildInto(commit, cache, log);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** How long one build may take, and another process waits for it. */
const BUILD_WITHIN_MS = 15 * 60_000;

async function buildInto(commit: string, cache: string, log: (line: string) => void): Promise<PreviousReleaseBuild> {
  // Under the lock no other build runs: a part left beside the cache is a build cut short.
  for (const name of readdirSync(dirname(cache))) {
    if (name.startsWith(`${commit}.part-`)) rmSync(join(dirname(cache), name), { recursive: true, force: true });
  }
  const part = `${cache}.part-${process.pid}`;
  mkdirSync(part, { recursive: true });
  const started = Date.now();
  try {
    log(`building ${PREVIOUS_RELEASE} into ${cache} (git archive, npm ci, npm run build)`);
    await run("bash", ["-o", "pipefail", "-c", 'git -C "$1" archive "$2" | tar -x -C "$3"', "archive", ROOT, commit, part], ROOT, 120_000);
    // --ignore-scripts: the package's own `prepare` would build it a second time, and its dependencies' install
    // scripts (deno's binary, esbuild's check) are not needed to build it or run it.
    await run("npm", ["ci", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts"], part, 600_000);
    await run("npm", ["run", "build"], part, 600_000);
    if (!existsSync(released(commit, part).cli) || !existsSync(released(commit, part).lib)) {
      throw new Error(`npm run build left no ${released(commit, part).cli} or ${released(commit, part).lib}`);
    }
    writeFileSync(join(part, ".built"), `${commit}\n`);
  } catch (error) {
    rmSync(part, { recursive: true, force: true });
    return { skip: `the previous release (${PREVIOUS_RELEASE}) could not be built: ${(error as Error).message}` };
  }
  // What a build cut short before its rename left in place (nothing, normally) goes first.
  rmSync(cache, { recursive: true, force: true });
  renameSync(part, cache);
  log(`built ${PREVIOUS_RELEASE} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { release: released(commit, cache) };
}
