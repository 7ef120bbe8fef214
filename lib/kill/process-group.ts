import { readdirSync } from "node:fs";
import { readProcStat } from "../proc/stat.ts";

/**
 * True while a live (non-zombie) process is in the group. kill(-pgid, 0)
 * answers for zombies too, and an orphan's zombie stays forever where PID 1
 * does not reap, so a group it finds is confirmed: by its leader, when the
 * leader lives and still leads it (one read), else from all of /proc. A
 * kill polls this for every task it ends; with 1,000 tasks ending at once
 * and 3,000 processes, reading all of /proc for each never finished.
 */
export function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    // EPERM means it exists but belongs to someone we may not signal.
    if ((error as { code?: string }).code !== "EPERM") return false;
  }
  if (leaderLives(pgid)) return true;
  return groupHasLiveMember(pgid);
}

/** The process whose pid is the group's id is alive and in that group (a pid is never reused while its group lives). */
function leaderLives(pgid: number): boolean {
  try {
    const leader = readProcStat(pgid);
    return leader !== null && leader.pgid === pgid && leader.state !== "Z" && leader.state !== "X";
  } catch {
    // Unreadable (out of descriptors): /proc decides, as before.
    return false;
  }
}

function groupHasLiveMember(pgid: number): boolean {
  const members = liveGroupMembers(pgid);
  return members === null || members.length > 0;
}

/**
 * The live (non-zombie) processes of a group, from /proc; null when /proc
 * cannot be listed (callers then assume the group lives, which only makes a
 * kill wait longer).
 */
export function liveGroupMembers(pgid: number): number[] | null {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return null;
  }
  const members: number[] = [];
  for (const name of entries) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    let stat;
    try {
      stat = readProcStat(Number(name));
    } catch {
      continue;
    }
    if (stat && stat.pgid === pgid && stat.state !== "Z" && stat.state !== "X") members.push(stat.pid);
  }
  return members;
}

/** Signals the whole group; false when it no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** How often a kill looks whether a signalled group is gone, unless told otherwise (`KillLadderOptions.pollMs`). */
export const DEFAULT_POLL_MS = 20;

/**
 * Resolves true as soon as `gone()` says so, checking every `pollMs`;
 * false once `timeoutMs` passed. A fast poll rather than a fixed sleep, so a
 * task that ends at once is seen at once.
 */
export async function waitUntil(
  gone: () => boolean | Promise<boolean>,
  timeoutMs: number,
  pollMs = DEFAULT_POLL_MS,
  signal?: AbortSignal,
): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await gone()) return true;
    if (signal?.aborted || Date.now() >= end) return false;
    await new Promise((r) => setTimeout(r, Math.min(pollMs, Math.max(1, end - Date.now()))));
  }
}
