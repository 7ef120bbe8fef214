import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { storagePaths, taskPaths } from "../store/layout.ts";
import type { TaskRecord } from "../store/record/record.ts";
import { unlinkIfThere } from "./remove-files.ts";

/**
 * The incarnation files no one needs: replay reads a record's incarnation to
 * tell whether its spawner still runs, so a file stays while any record (or
 * the living holder) names it. Pure.
 *
 * @example
 * ```ts
 * import { unneededIncarnations } from "./incarnation-gc.ts";
 * console.log(unneededIncarnations(["i-a.json", "i-b.json", ".tmp"], new Set(["i-b"]))); // ["i-a.json"]
 * ```
 */
export function unneededIncarnations(files: readonly string[], needed: ReadonlySet<string>): string[] {
  return files.filter((f) => f.endsWith(".json") && !f.startsWith(".") && !needed.has(f.slice(0, -".json".length)));
}

/**
 * Removes every incarnation file no record names. Records outlive could not
 * parse (a newer schema, left in place) are read loosely for the name, so
 * a newer outlive still finds what it needs.
 */
export async function removeUnneededIncarnations(
  root: string,
  records: Iterable<TaskRecord>,
  alsoNeeded: { ids: Iterable<string>; unparsedTaskIds: Iterable<string> },
): Promise<number> {
  const needed = new Set<string>(alsoNeeded.ids);
  for (const r of records) needed.add(r.incarnation);
  for (const id of alsoNeeded.unparsedTaskIds) {
    try {
      const raw = JSON.parse(await readFile(taskPaths(root, id).record, "utf8"));
      if (typeof raw?.incarnation === "string") needed.add(raw.incarnation);
    } catch {
      // unreadable: it names nothing replay could use
    }
  }
  const dir = storagePaths(root).incarnations;
  const unneeded = unneededIncarnations(await readdir(dir), needed);
  for (const file of unneeded) await unlinkIfThere(join(dir, file));
  return unneeded.length;
}
