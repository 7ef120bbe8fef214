import { closeSync, constants, openSync, renameSync } from "node:fs";
import { type TaskPaths, timedOutReservePath } from "../store/layout.ts";

/**
 * Marks a task's deadline in its `io/timed-out`, as its watchdog (the shim,
 * or an older release's warden) does, for the supervisor's own deadline kill:
 * a live supervisor's timer counts from `createdAt` and so often comes a few
 * milliseconds before the watchdog's, which counts from the task's start. The
 * kill then leaves the same evidence the watchdog would have: a timed-out
 * task's end is dated by the marker whoever ended it (`replay/end-time.ts`).
 *
 * The reserve made at the spawn is renamed into place (no new space needed
 * on a full disk) and opened with O_TRUNC, which dates it, as the shim does.
 * A marker already there is the watchdog's, made at the true deadline: it is
 * left as it is. Never through a symlink. Best effort: a marker that cannot
 * be made leaves the end to be dated by the next evidence.
 *
 * @example
 * ```ts
 * import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { taskPaths } from "../store/layout.ts";
 * import { markTimedOut } from "./deadline-mark.ts";
 * const storage = mkdtempSync(join(tmpdir(), "mark-"));
 * const paths = taskPaths(storage, "t-1");
 * mkdirSync(paths.io, { recursive: true });
 * writeFileSync(`${paths.timedOut}.reserved`, "");
 * markTimedOut(paths);
 * console.log(existsSync(paths.timedOut), existsSync(`${paths.timedOut}.reserved`)); // true false
 * rmSync(storage, { recursive: true });
 * ```
 */
export function markTimedOut(paths: TaskPaths): void {
  let flags = constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW;
  try {
    renameSync(timedOutReservePath(paths), paths.timedOut);
    // The reserve's own time is the spawn's: truncating dates it now.
    flags |= constants.O_TRUNC;
  } catch {
    // No reserve: the watchdog took it (its marker stands), or a task of a release that made none.
    flags |= constants.O_EXCL;
  }
  try {
    closeSync(openSync(paths.timedOut, flags, 0o666));
  } catch {
    // EEXIST: the watchdog's marker. Anything else (a full disk, a removed directory): no marker.
  }
}
