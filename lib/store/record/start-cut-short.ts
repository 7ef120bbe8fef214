import { lstatSync, readdirSync, rmdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import type { TaskPaths } from "../layout.ts";
import { isTempNameFor } from "../write/atomic-write.ts";

/**
 * Whether a task directory with no `record.json` is a task's creation cut
 * short by a power cut, from what it holds: nothing but an empty `io/` and
 * temp files of its first record. A task is made as `mkdir` of its
 * directory and of `io/`, its first record written to a temp file and
 * flushed, then renamed into place, and only then spawned. The flush
 * commits the file system's journal with the two directories and the temp
 * file in it; a power cut before the rename's own commit leaves exactly
 * this (soak-power found it at every cut at a first record's rename, on
 * systemd 257's guest). Its `run` never returned and its process never
 * existed, so there is no task to report: anything else in the directory
 * (output, an exit marker) is evidence of a task and keeps it a corrupt
 * one, quarantined. Pure.
 *
 * @example
 * ```ts
 * import { isStartCutShort } from "./start-cut-short.ts";
 * console.log(isStartCutShort(["io", ".record.json.412.0a1b2c3d.tmp"], [])); // true
 * console.log(isStartCutShort([], null)); // true
 * console.log(isStartCutShort(["io"], ["stdout"])); // false
 * console.log(isStartCutShort(["notes.txt"], null)); // false
 * ```
 */
export function isStartCutShort(entries: string[], ioEntries: string[] | null): boolean {
  for (const name of entries) {
    if (name === "io") {
      if (ioEntries === null || ioEntries.length > 0) return false;
    } else if (!isTempNameFor(name, "record.json")) {
      return false;
    }
  }
  return true;
}

/**
 * Removes a task directory that {@link isStartCutShort} says is a creation
 * cut short, and returns true; leaves anything else as it is and returns
 * false. Nothing is followed: `io` must be a directory itself, the temp
 * files regular files.
 */
export function removeStartCutShort(p: TaskPaths): boolean {
  let entries: string[];
  let ioEntries: string[] | null = null;
  try {
    entries = readdirSync(p.dir);
    for (const name of entries) {
      const info = lstatSync(join(p.dir, name));
      if (name === "io" && info.isDirectory()) ioEntries = readdirSync(p.io);
      else if (name !== "io" && !info.isFile()) return false;
    }
  } catch {
    return false;
  }
  if (!isStartCutShort(entries, ioEntries)) return false;
  try {
    for (const name of entries) if (name !== "io") unlinkSync(join(p.dir, name));
    if (ioEntries !== null) rmdirSync(p.io);
    rmdirSync(p.dir);
    return true;
  } catch {
    return false;
  }
}
