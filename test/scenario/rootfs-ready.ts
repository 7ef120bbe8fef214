import { DEFAULTS, ensureRootfs, resolveOptions, type Suite } from "../../harness/host/container/mod.ts";
import { defaultCacheDir } from "../../harness/host/container/image/cache-dir.ts";

/**
 * How long a hook may wait for rootfsReady: each suite's debootstrap is bounded by the harness's own
 * buildTimeoutMs, and they are built one after the other.
 */
export const ROOTFS_READY_MS = 2 * DEFAULTS.buildTimeoutMs + 60_000;

/**
 * Builds (or finds) the root file systems that a scenario run boots, in the cache that run uses (ENV's, as
 * the CLI reads it), before a test starts the run under its hang guard. On a fresh machine the first run
 * builds them, and under load that took longer than the guard: a run killed at 240 s while debootstrap
 * still ran, its report never written. A build that cannot happen here is left to the run, which says why.
 */
export async function rootfsReady(suites: readonly Suite[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const cacheDir = defaultCacheDir(env);
  for (const suite of suites) {
    try {
      const r = await ensureRootfs(resolveOptions({ suite, cacheDir }));
      if (r.buildMs !== null) console.log(`test/scenario: built ${suite}'s root file system in ${(r.buildMs / 1000).toFixed(0)} s (a cold cache)`);
    } catch (error) {
      console.log(`test/scenario: ${suite}'s root file system was not built here (${(error as Error).message}); the run will say why`);
    }
  }
}
