import { mkdir, stat } from "node:fs/promises";
import { OutliveError } from "../../errors.ts";
import { writeFileAtomic } from "../write/atomic-write.ts";
import { withBallast } from "../full-disk/ballast.ts";
import { storagePaths } from "../layout.ts";
import { ReservePool } from "../full-disk/reserve-pool.ts";
import { storageError } from "./storage-error.ts";

/**
 * Readies the storage at `root` for a writable open: creates it if missing
 * (0700) and refuses one that others could tamper with (another owner,
 * writable by group or others) before anything is made inside it, so a
 * refused root is left exactly as it was. Then makes `tasks/`,
 * `quarantine/`, `incarnations/`, takes stock of the reserves, and checks
 * that the storage takes writes (giving up the ballast on a full disk; see
 * withBallast). Returns the reserves.
 *
 * @example
 * ```ts
 * import { mkdtempSync, readdirSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { prepareStorage } from "./open-storage.ts";
 * const root = join(mkdtempSync(join(tmpdir(), "outlive-open-")), "storage");
 * await prepareStorage(root, 0);
 * console.log(readdirSync(root).sort()); // ["incarnations", "quarantine", "reserves", "tasks"]
 * rmSync(join(root, ".."), { recursive: true });
 * ```
 */
export async function prepareStorage(root: string, ballastBytes: number): Promise<ReservePool> {
  try {
    await mkdir(root, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw cannotCreate(root, error);
  }
  const info = await stat(root);
  if (!info.isDirectory()) throw new OutliveError("E_STORAGE", `The storage path ${root} is not a directory`);
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) {
    throw new OutliveError(
      "E_STORAGE",
      `The storage directory ${root} belongs to uid ${info.uid}, not to this user (uid ${uid}); refusing to use it`,
    );
  }
  if (info.mode & 0o022) {
    throw new OutliveError(
      "E_STORAGE",
      `The storage directory ${root} is writable by others (mode ${(info.mode & 0o777).toString(8)}); run chmod 700 on it`,
    );
  }
  const layout = storagePaths(root);
  try {
    for (const dir of [layout.tasks, layout.quarantine, layout.incarnations]) await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw cannotCreate(root, error);
  }
  let reserves: ReservePool;
  try {
    reserves = ReservePool.open(root);
  } catch (error) {
    throw new OutliveError("E_STORAGE", `Cannot read the storage's reserves in ${layout.reserves}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  await withBallast(root, ballastBytes, () => probeWrites(root));
  return reserves;
}

function cannotCreate(root: string, error: unknown): OutliveError {
  return new OutliveError("E_STORAGE", `Cannot create the storage directory ${root}: ${(error as Error).message}`, {
    cause: error,
  });
}

/** Whether the storage takes writes: nothing reads the probe back, so nothing is flushed. */
async function probeWrites(root: string): Promise<void> {
  const { tasks, writeCheck } = storagePaths(root);
  try {
    await writeFileAtomic(writeCheck, "ok\n", { durable: false });
  } catch (error) {
    throw storageError(tasks, error);
  }
}
