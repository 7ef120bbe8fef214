import { randomBytes } from "node:crypto";
import { link, readdir, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { OutliveError } from "../errors.ts";
import { bootId } from "../proc/boot-id.ts";
import { type Incarnation, incarnationAlive } from "./incarnation.ts";

const LOCK_NAME = "supervisor.lock";

/**
 * Makes `inc` the one supervisor of the storage. A live holder is refused
 * (E_STORAGE_LOCKED naming it); a holder that is provably gone (dead, pid
 * reused, or from an earlier boot) is taken over.
 */
export async function acquireStorageLock(root: string, inc: Incarnation, attempts = 5): Promise<void> {
  const lockPath = join(root, LOCK_NAME);
  // The lock appears complete or not at all: written aside, then hard-linked into place (link fails if it exists).
  const temp = join(root, `.${LOCK_NAME}.${process.pid}.${randomBytes(4).toString("hex")}`);
  await writeFile(temp, `${JSON.stringify(inc)}\n`, { mode: 0o600 });
  try {
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
      if (holder && incarnationAlive(holder, bootId())) {
        throw new OutliveError(
          "E_STORAGE_LOCKED",
          `The storage ${root} is in use by another supervisor: pid ${holder.pid} (incarnation ${holder.id}, since ${holder.startedAt}). Stop it first, or use another --storage.`,
        );
      }
      // Only one contender's rename of the stale lock succeeds; the others retry the link.
      await rename(lockPath, `${lockPath}.stale-${randomBytes(4).toString("hex")}`).catch(() => {});
      await unlinkStale(root);
    }
    throw new OutliveError("E_STORAGE_LOCKED", `Could not take the lock ${lockPath} after ${attempts} attempts`);
  } finally {
    await unlink(temp).catch(() => {});
  }
}

/** Gives the lock up, only if it is still ours. */
export async function releaseStorageLock(root: string, inc: Incarnation): Promise<void> {
  const lockPath = join(root, LOCK_NAME);
  const holder = await readHolder(lockPath);
  if (holder?.id === inc.id) await unlink(lockPath).catch(() => {});
}

/** Who holds the storage now, if anyone alive. */
export async function storageHolder(root: string): Promise<Incarnation | null> {
  const holder = await readHolder(join(root, LOCK_NAME));
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

async function unlinkStale(root: string): Promise<void> {
  for (const name of await readdir(root)) {
    if (name.startsWith(`${LOCK_NAME}.stale-`)) await unlink(join(root, name)).catch(() => {});
  }
}
