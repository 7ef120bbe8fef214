// Builds storages with known-good records beside hostile ones, and proves
// what a supervisor did to them. Shared by the Node and Deno suites.
import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bootId } from "../../../lib/proc/boot-id.ts";
import { SCHEMA_VERSION, type TaskRecord } from "../../../lib/store/record/record.ts";

/** A finished, acknowledged record: replay leaves it exactly as it is. */
export function goodRecord(id: string, overrides: Partial<TaskRecord> = {}): TaskRecord {
  const t = "2024-05-01T10:00:00.000Z";
  return {
    schemaVersion: SCHEMA_VERSION,
    id,
    key: null,
    generation: null,
    command: { argv: ["sh", "-c", "echo hi; exit 3"] },
    cwd: "/",
    state: "exited",
    exitCode: 3,
    reason: "exited with code 3",
    createdAt: t,
    startedAt: t,
    finishedAt: t,
    lastOutputAt: t,
    outputTail: "hi\n",
    timeoutSeconds: null,
    deadlineAt: "2024-05-02T10:00:00.000Z",
    deadlineIsTimeout: false,
    memoryMaxBytes: null,
    pid: 4242,
    pgid: 4242,
    startTime: "123",
    bootId: bootId(),
    incarnation: "i-test-000000",
    supervisorCgroup: null,
    placement: "process-group",
    location: {},
    killStartedAt: null,
    killReason: null,
    killState: null,
    acknowledgedAt: t,
    ...overrides,
  };
}

export function recordText(record: unknown): string {
  return `${JSON.stringify(record, null, 2)}\n`;
}

/** A fresh storage root (0700) under the system temp dir. */
export function makeStorage(label = "hostile"): string {
  return mkdtempSync(join(tmpdir(), `outlive-${label}-`));
}

/** Writes `<root>/tasks/<id>/record.json` (+ empty io/) the way the store does. */
export function writeTask(root: string, id: string, content: string | Uint8Array): string {
  const dir = join(root, "tasks", id);
  mkdirSync(join(dir, "io"), { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, "io", "stdout"), "hi\n", { mode: 0o600 });
  writeFileSync(join(dir, "record.json"), content, { mode: 0o600 });
  return dir;
}

/** A digest of a file tree that never follows a symlink: names, types, modes, contents, link targets. */
export function hashTree(path: string): string {
  const h = createHash("sha256");
  const walk = (p: string, rel: string) => {
    const info = lstatSync(p);
    h.update(`${rel}\0${info.mode}\0`);
    if (info.isSymbolicLink()) h.update(`link:${readlinkSync(p)}\0`);
    else if (info.isFile()) h.update(readFileSync(p));
    else if (info.isDirectory()) for (const name of readdirSync(p).sort()) walk(join(p, name), `${rel}/${name}`);
    h.update("\0\0");
  };
  walk(path, ".");
  return h.digest("hex");
}

/** Hashes every task directory but the one named. */
export function hashOthers(root: string, except: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const id of readdirSync(join(root, "tasks"))) {
    if (id !== except && !id.startsWith(".")) out.set(id, hashTree(join(root, "tasks", id)));
  }
  return out;
}

/**
 * A file outside any storage, to be pointed at by symlinks. Its atime is set
 * to 2000, so under relatime (or strictatime) any read moves it: `stamp()`
 * (which reads only metadata) changes if anything read or wrote the file.
 */
export function makeBait(): { dir: string; file: string; secret: string; stamp: () => string } {
  const dir = mkdtempSync(join(tmpdir(), "outlive-bait-"));
  const file = join(dir, "secret");
  const secret = `bait-${Math.random().toString(36).slice(2)}\n`;
  writeFileSync(file, secret, { mode: 0o644 });
  utimesSync(file, new Date("2000-01-01T00:00:00Z"), new Date());
  const stamp = () => {
    const i = lstatSync(file);
    return `${i.size}|${i.atimeMs}|${i.mtimeMs}|${i.ctimeMs}`;
  };
  return { dir, file, secret, stamp };
}

export function removeAll(...paths: string[]): void {
  for (const p of paths) rmSync(p, { recursive: true, force: true });
}

export const quietLog = () => {};
