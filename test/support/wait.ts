import { join } from "node:path";
import { waitUntil } from "../../lib/kill/process-group.ts";
import { readExitMarkerNow } from "../../lib/observe/exit-marker.ts";

/**
 * Polls `ready` until it holds, and throws naming `what` once `timeoutMs`
 * has passed. Tests wait for the event they need this way, never for a
 * fixed time: a loaded machine only makes the wait longer.
 */
export async function waitFor(what: string, ready: () => boolean | Promise<boolean>, timeoutMs = 20_000, intervalMs = 20): Promise<void> {
  if (!(await waitUntil(ready, timeoutMs, intervalMs))) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** True once task `id`'s wrapper has written its exit code to `<storage>/tasks/<id>/io/exit`. */
export function exitCodeWritten(storage: string, id: string): boolean {
  return readExitMarkerNow(join(storage, "tasks", id, "io", "exit")).kind === "code";
}
