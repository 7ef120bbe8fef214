/** True while any process is in the group (kill with signal 0 finds one). */
export function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    // EPERM means it exists but belongs to someone we may not signal.
    return (error as { code?: string }).code === "EPERM";
  }
}

/** Signals the whole group; false when it no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves true as soon as `gone()` says so, checking every `pollMs`;
 * false once `timeoutMs` passed. A fast poll rather than a fixed sleep, so a
 * task that ends at once is seen at once.
 */
export async function waitUntil(
  gone: () => boolean | Promise<boolean>,
  timeoutMs: number,
  pollMs = 20,
  signal?: AbortSignal,
): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await gone()) return true;
    if (signal?.aborted || Date.now() >= end) return false;
    await new Promise((r) => setTimeout(r, Math.min(pollMs, Math.max(1, end - Date.now()))));
  }
}
