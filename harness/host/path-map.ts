import { realpathSync } from "node:fs";
import { join, relative, sep } from "node:path";
import type { Bind } from "./container/mod.ts";

/** Where the outlive package (the container's project directory) appears inside the container. */
export const PROJECT_INSIDE = "/work/project";
/** Host folders beyond the project appear under this, at their host path (`/work/host/home/me/app`). */
export const HOST_INSIDE = "/work/host";

function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Which host folders the container sees, and where: the outlive package at
 * /work/project, and (for scenario files from anywhere) each other folder
 * at /work/host/<its host path>. Pure once made; `inside` answers for any
 * host path in a bound folder.
 */
export class PathMap {
  /** Extra binds to give the container (beyond the project). */
  readonly binds: Bind[];
  private readonly all: Bind[];

  constructor(readonly projectDir: string, folders: readonly string[] = []) {
    const project = real(projectDir);
    // Only the outermost of nested folders is bound; one bound inside another would be seen twice.
    const wanted = [...new Set(folders.map(real))]
      .filter((f) => !within(f, project))
      .sort((a, b) => a.length - b.length)
      .filter((f, i, list) => !list.slice(0, i).some((outer) => within(f, outer)));
    this.binds = wanted.map((host) => ({ host, inside: join(HOST_INSIDE, host) }));
    // A bound folder may contain the project (a user's app with outlive in its node_modules): the outermost match
    // wins, so the package is seen where its hoisted dependencies are (`…/node_modules/zx` beside it).
    this.all = [{ host: project, inside: PROJECT_INSIDE }, ...this.binds].sort((a, b) => a.host.length - b.host.length);
  }

  /** The path inside the container of a host path in a bound folder; throws naming the path otherwise. */
  inside(hostPath: string): string {
    const path = real(hostPath);
    const bind = this.all.find((b) => within(path, b.host));
    if (!bind) throw new Error(`${hostPath} is in no folder bound into the container`);
    const rest = relative(bind.host, path);
    return rest === "" ? bind.inside : join(bind.inside, rest);
  }
}
