import { randomBytes } from "node:crypto";
import { link, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { OutliveError } from "../../errors.ts";
import { bootId } from "../../proc/boot-id.ts";
import { type Incarnation, incarnationAlive } from "./incarnation.ts";
import { lockAsidePath, lockTempPath, storagePaths } from "../layout.ts";

/**
 * Makes `inc` the one supervisor of the storage. A live holder is refused
 * (E_STORAGE_LOCKED naming it); a holder that is provably gone (dead, pid
 * reused, or from an earlier boot) is taken over.
 */
export async function acquireStorageLock(root: string, inc: Incarnation, attempts = 50): Promise<void> {
  const lockPath = storagePaths(root).lock;
  // The lock appears complete or not at all: written aside, then hard-linked into place (link fails if it exists).
  const temp = lockTempPath(root, `${process.pid}.${randomBytes(4).toString("hex")}`);
  try {
    try {
      await writeFile(temp, `${JSON.stringify(inc)}\n`, { mode: 0o600 });
    } catch (error) {
      throw new OutliveError("E_STORAGE", `Cannot create the lock ${lockPath}: ${(error as Error).message}`, { cause: error });
    }
    for (let attempt = 0; attempt < attempts; attempt++) {
      try {
        await link(temp, lockPath);
        return;
      } catch (error) {
        if ((error as { code?: string }).code !== "EEXIST") {
          throw new OutliveError("E_STORAGE", `Cannot create the lock ${lockPath}: ${(error as Error).message}`);
        }
      }
      const holder = await readHolder(lockPath);
      if (holder && incarnationAlive(holder, bootId())) throw lockedBy(root, holder);
      await breakStaleLock(root, temp, holder);
    }
    throw new OutliveError("E_STORAGE_LOCKED", `Could not take the lock ${lockPath} after ${attempts} attempts`);
  } finally {
    await unlink(temp).catch(() => {});
  }
}

/** Gives the lock up, only if it is still ours. */
export async function releaseStorageLock(root: string, inc: Incarnation): Promise<void> {
  const lockPath = storagePaths(root).lock;
  const holder = await readHolder(lockPath);
  if (holder?.id === inc.id) await unlink(lockPath).catch(() => {});
}

/**
 * Who holds the storage now, if anyone alive.
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { Supervisor } from "../../supervisor/supervisor.ts";
 * import { storageHolder } from "./storage-lock.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-holder-"));
 * console.log(await storageHolder(storage)); // null: nobody holds it
 * const sup = await Supervisor.open({ storage, mode: "standalone" });
 * console.log((await storageHolder(storage))?.pid === process.pid); // true
 * await sup.close();
 * console.log(await storageHolder(storage)); // null
 * rmSync(storage, { recursive: true });
 * ```
 */
export async function storageHolder(root: string): Promise<Incarnation | null> {
  const holder = await readHolder(storagePaths(root).lock);
  return holder && incarnationAlive(holder, bootId()) ? holder : null;
}

async function readHolder(lockPath: string): Promise<Incarnation | null> {
  try {
    const value = JSON.parse(await readFile(lockPath, "utf8"));
    return typeof value?.pid === "number" && typeof value?.startTime === "string" ? value : null;
  } catch {
    return null;
  }
}

function lockedBy(root: string, holder: Incarnation): OutliveError {
  return new OutliveError(
    "E_STORAGE_LOCKED",
    `The storage ${root} is in use by another supervisor: pid ${holder.pid} (incarnation ${holder.id}, since ${holder.startedAt}). Stop it first, or use another --storage.`,
  );
}

/**
 * Moves a stale lock aside. Two contenders that both judged it stale must
 * not both move "the lock": the second would move the first one's fresh
 * lock away and both would hold the storage. So the move happens only under
 * a breaker file (made by link, which fails if it exists), and only if the
 * lock still names the holder judged stale. A breaker left by a contender
 * that died is removed once its own holder is provably gone.
 */
async function breakStaleLock(root: string, temp: string, judged: Incarnation | null): Promise<void> {
  const { lock: lockPath, lockBreaker: breaker } = storagePaths(root);
  try {
    await link(temp, breaker);
  } catch (error) {
    if ((error as { code?: string }).code !== "EEXIST") throw error;
    const other = await readHolder(breaker);
    if (!other || !incarnationAlive(other, bootId())) await unlink(breaker).catch(() => {});
    else await new Promise((r) => setTimeout(r, 5));
    return;
  }
  try {
    const now = await readHolder(lockPath);
    if ((now?.id ?? null) !== (judged?.id ?? null)) return; // someone took it meanwhile: look again
    const aside = lockAsidePath(root, randomBytes(4).toString("hex"));
    await rename(lockPath, aside).catch(() => {});
    await unlink(aside).catch(() => {});
  } finally {
    await unlink(breaker).catch(() => {});
  }
}
