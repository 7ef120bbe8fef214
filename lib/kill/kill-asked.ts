import { closeSync, constants, openSync } from "node:fs";
import type { TaskPaths } from "../store/layout.ts";

/**
 * Makes a task's `io/kill-asked` (empty) just before the first signal of the
 * supervisor's kill, once the `killing` record is written. The TERM that
 * follows reaches the task's shim (or shell wrapper) as a TERM from outside,
 * which is also how a host's shutdown reaches it; without this marker it
 * asks the host whether it is stopping, and waits for the answer before it
 * writes the exit code: milliseconds from the system bus, but up to 4 s where
 * only systemctl can answer, past the kill ladder's default grace of 2 s, so
 * the ladder's KILL could take the shim before it wrote the code. A kill's
 * end is said by its `killing` record whatever the host answers, so the
 * question is not asked.
 *
 * Made create-exclusive and never through a symlink. Best effort: a marker
 * already there is an earlier ladder's (a kill resumed after a restart); one
 * that cannot be made (a full disk, a removed directory) leaves the task to
 * ask the host as before, bounded.
 *
 * @example
 * ```ts
 * import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { taskPaths } from "../store/layout.ts";
 * import { markKillAsked } from "./kill-asked.ts";
 * const storage = mkdtempSync(join(tmpdir(), "mark-"));
 * const paths = taskPaths(storage, "t-1");
 * mkdirSync(paths.io, { recursive: true });
 * markKillAsked(paths);
 * markKillAsked(paths);
 * console.log(existsSync(paths.killAsked)); // true
 * rmSync(storage, { recursive: true });
 * ```
 */
export function markKillAsked(paths: TaskPaths): void {
  try {
    closeSync(openSync(paths.killAsked, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o666));
  } catch {
    // EEXIST: an earlier ladder's marker. Anything else: no marker, and the task's end asks the host, bounded.
  }
}
