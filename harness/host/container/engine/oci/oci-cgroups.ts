import { existsSync, readdirSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { removeCgroupTree } from "../../host-checks/host-cgroup.ts";

/** Where podman (cgroupfs manager) puts every container: `<hierarchy>/libpod_parent/libpod-<id>`, and conmon beside them. */
export const LIBPOD_PARENT = "libpod_parent";

/** Every mounted hierarchy under /sys/fs/cgroup (v1 controllers, name=systemd, and v2 at unified on a hybrid host; the root itself on a pure v2 host). */
export function cgroupHierarchies(root = "/sys/fs/cgroup"): string[] {
  if (existsSync(join(root, "cgroup.controllers"))) return [root];
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => join(root, e.name));
}

/**
 * After `podman rm`, its cgroups stay on a cgroupfs host. Removes the
 * container's own tree (`libpod-<id>`, deepest first), then conmon's and
 * libpod_parent itself when empty. Nothing else below libpod_parent is
 * touched: an empty cgroup there may belong to another running container.
 * Returns this container's directories that could not be removed.
 */
export function removeLibpodCgroups(containerId: string, root = "/sys/fs/cgroup"): string[] {
  const left: string[] = [];
  for (const hierarchy of cgroupHierarchies(root)) {
    const parent = join(hierarchy, LIBPOD_PARENT);
    if (!existsSync(parent)) continue;
    left.push(...removeCgroupTree(join(parent, `libpod-${containerId}`)));
    // Shared with other containers: EBUSY here is theirs, not a leftover of ours.
    for (const dir of [join(parent, "conmon"), parent]) rmdirQuietly(dir);
  }
  return left;
}

function rmdirQuietly(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // Absent, or still in use by another container.
  }
}
