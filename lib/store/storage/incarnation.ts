import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { bootId } from "../../proc/boot-id.ts";
import { readCgroup } from "../../proc/cgroup.ts";
import { isSameProcess } from "../../proc/identity.ts";
import { readProcStat } from "../../proc/stat.ts";
import { writeFileAtomic } from "../write/atomic-write.ts";
import { incarnationPath } from "../layout.ts";
import { storageError } from "./storage-error.ts";

/** One life of a supervisor on a storage: who it was, where it ran, when it began. */
export interface Incarnation {
  id: string;
  pid: number;
  startTime: string;
  cgroup: string | null;
  bootId: string;
  startedAt: string;
}

/** Describes the calling process as a new incarnation. */
export function currentIncarnation(now = new Date()): Incarnation {
  const stat = readProcStat(process.pid);
  return {
    id: `i-${now.getTime().toString(36)}-${randomBytes(3).toString("hex")}`,
    pid: process.pid,
    startTime: stat?.startTime ?? "0",
    cgroup: readCgroup("self"),
    bootId: bootId(),
    startedAt: now.toISOString(),
  };
}

/** True when that incarnation's process still runs (same boot, same pid and start time). */
export function incarnationAlive(inc: Incarnation, bootNow: string): boolean {
  return inc.bootId === bootNow && isSameProcess({ pid: inc.pid, startTime: inc.startTime });
}

export async function saveIncarnation(root: string, inc: Incarnation): Promise<void> {
  const path = incarnationPath(root, inc.id);
  try {
    // Not flushed: after a host crash every task's boot id answers before its incarnation is asked.
    await writeFileAtomic(path, `${JSON.stringify(inc)}\n`, { durable: false });
  } catch (error) {
    throw storageError(path, error);
  }
}

/** Reads a stored incarnation; null when missing or unreadable (replay then says less, never more). */
export async function loadIncarnation(root: string, id: string): Promise<Incarnation | null> {
  if (!/^[a-z0-9-]+$/.test(id)) return null;
  try {
    const value = JSON.parse(await readFile(incarnationPath(root, id), "utf8"));
    return typeof value?.pid === "number" && typeof value?.startTime === "string" ? value : null;
  } catch {
    return null;
  }
}
