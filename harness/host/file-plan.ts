import { mkdirSync, statSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { nearestPackageDir } from "../shared/project-root.ts";
import { PathMap } from "./path-map.ts";

export interface FilePlanInput {
  /** The outlive package on the host (the container's project directory). */
  packageRoot: string;
  /** Scenario files, as given. */
  files: readonly string[];
  /** `--reports DIR`, or each file's own `reports/` beside it. */
  reportsDir?: string;
  /** The deno binary to run the driver with, if any. */
  denoPath?: string;
}

export interface FilePlan {
  paths: PathMap;
  /** Per file (resolved path): its reports folder and its project folder (nearest package.json). */
  files: Map<string, { reportsDir: string; projectDir: string }>;
}

/** The folder holding `node_modules/outlive`, when the package is installed rather than checked out. */
export function installRoot(packageRoot: string): string | null {
  const at = packageRoot.indexOf(`${sep}node_modules${sep}`);
  return at === -1 ? null : packageRoot.slice(0, at) || sep;
}

/** The nearest folder at or above `from` with a package.json (the user's project), else `from` itself. */
export function projectDirOf(from: string): string {
  return nearestPackageDir(from) ?? from;
}

/**
 * What the container must see to run scenario files from anywhere: each
 * file's project (so its imports, `outlive/harness` among them, resolve as
 * on the host), its reports folder (written by the driver), the consumer
 * project when outlive is installed in one (its hoisted dependencies), and
 * the deno binary's folder. Makes the reports folders.
 */
export function planFiles(input: FilePlanInput): FilePlan {
  const files = new Map<string, { reportsDir: string; projectDir: string }>();
  for (const f of input.files) {
    const path = resolve(f);
    const reportsDir = resolve(input.reportsDir ?? join(dirname(path), "reports"));
    mkdirSync(reportsDir, { recursive: true });
    files.set(path, { reportsDir, projectDir: projectDirOf(dirname(path)) });
  }
  const folders = [
    ...[...files.values()].flatMap((f) => [f.projectDir, f.reportsDir]),
    ...(installRoot(input.packageRoot) ? [installRoot(input.packageRoot)!] : []),
    ...(input.denoPath ? [dirname(input.denoPath)] : []),
  ];
  return { paths: new PathMap(input.packageRoot, folders), files };
}

/**
 * Bound folders the container's user (uid `uid`) could not enter: a
 * project in a 0700 folder of root's, say. One line each, with the fix;
 * the runner says them instead of letting systemd fail with "exit 200".
 */
export function unreadableBinds(plan: FilePlan, uid: number): string[] {
  return plan.paths.binds.flatMap(({ host }) => {
    const st = statSync(host);
    const ok = st.uid === uid || (st.gid === uid && (st.mode & 0o050) === 0o050) || (st.mode & 0o005) === 0o005;
    return ok ? [] : [`${host}: the container's user (uid ${uid}) cannot enter it (mode ${(st.mode & 0o777).toString(8)}): chmod o+rx it`];
  });
}
