import { readFile } from "node:fs/promises";
import { writeFileAtomic } from "../store/write/atomic-write.ts";
import { storagePaths } from "../store/layout.ts";

/** The largest generation ever removed from this storage; 0 when none was. */
export async function readGenerationFloor(root: string): Promise<number> {
  try {
    const n = Number((await readFile(storagePaths(root).generationFloor, "utf8")).trim());
    return Number.isSafeInteger(n) && n > 0 ? n : 0;
  } catch {
    return 0;
  }
}

/**
 * Generations only grow across restarts, and replay resumes after the
 * largest one stored. Removing the records that held it would lower that,
 * so it is written here first (`generation-floor`), before any keyed record goes.
 */
export async function raiseGenerationFloor(root: string, generation: number): Promise<void> {
  if (generation > (await readGenerationFloor(root))) await writeFileAtomic(storagePaths(root).generationFloor, `${generation}\n`);
}
