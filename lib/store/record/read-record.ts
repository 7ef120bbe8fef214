import { Buffer } from "node:buffer";
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from "node:fs";
import { OutliveError } from "../../errors.ts";
import { taskIoProblem } from "./io-check.ts";
import type { TaskPaths } from "../layout.ts";
import { parseRecord, type RecordProblem } from "./parse-record.ts";
import { isTerminal, type TaskRecord } from "./record.ts";
import { storageError } from "../storage/storage-error.ts";
import { TASK_ID_PATTERN } from "./task-id.ts";

/**
 * What a task's entry in `tasks/` is, as a directory listing already says
 * (readdir's file types: one getdents for the whole listing instead of an
 * lstat a task, a tenth of a load of 1,000 records).
 */
export type TaskEntryKind = "directory" | "symlink" | "other";

/** A listing's file type as a TaskEntryKind; undefined where the file system did not say (DT_UNKNOWN). */
export function entryKindOfDirent(d: { isDirectory(): boolean; isSymbolicLink(): boolean; isFile(): boolean; isFIFO(): boolean; isSocket(): boolean; isBlockDevice(): boolean; isCharacterDevice(): boolean }): TaskEntryKind | undefined {
  if (d.isSymbolicLink()) return "symlink";
  if (d.isDirectory()) return "directory";
  if (d.isFile() || d.isFIFO() || d.isSocket() || d.isBlockDevice() || d.isCharacterDevice()) return "other";
  return undefined;
}

/** One buffer for every read: a record is read whole into it, with one read(2) where the size is right. */
let readBuffer = Buffer.allocUnsafe(64 * 1024);

/** The whole file at `fd` as UTF-8: `size` is fstat's, a hint; reads on until end of file (a record may be replaced, never appended to, but a hint is no promise). */
function readWhole(fd: number, size: number): string {
  if (readBuffer.length < size + 1) readBuffer = Buffer.allocUnsafe(size + 1);
  let length = 0;
  for (;;) {
    if (length === readBuffer.length) {
      if (length > MAX_RECORD_BYTES) throw new Error(`larger than any record (over ${MAX_RECORD_BYTES} bytes)`);
      const bigger = Buffer.allocUnsafe(readBuffer.length * 2);
      readBuffer.copy(bigger, 0, 0, length);
      readBuffer = bigger;
    }
    const n = readSync(fd, readBuffer, length, readBuffer.length - length, null);
    if (n === 0) return readBuffer.toString("utf8", 0, length);
    length += n;
  }
}

function entryKindOf(root: string, id: string, p: TaskPaths): TaskEntryKind {
  let dirInfo;
  try {
    dirInfo = lstatSync(p.dir);
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") {
      throw new OutliveError("E_NO_TASK", `No task ${JSON.stringify(id)} in ${root}`);
    }
    throw storageError(p.dir, error);
  }
  return dirInfo.isSymbolicLink() ? "symlink" : dirInfo.isDirectory() ? "directory" : "other";
}

export type ReadResult = { ok: true; record: TaskRecord } | { ok: false; id: string; problem: RecordProblem };

/** The reason of a task directory with no record.json (lib/store/record/start-cut-short.ts tells a creation cut short apart). */
export const RECORD_MISSING = "record.json is missing";

/** Records larger than this are not records outlive wrote. */
const MAX_RECORD_BYTES = 1 << 20;

/**
 * Reads the record of task `id` (its files at `p`, in the storage `root`)
 * without following symlinks, and says what is wrong rather than throwing:
 * a problem is the record's (it is then quarantined or left for a newer
 * outlive), a throw is the storage's or the caller's (E_NO_TASK: no such
 * directory; E_STORAGE: out of descriptors, which says nothing about the
 * record). Synchronous calls: a record is a small local file, and replay
 * reads thousands of them, where the thread-pool round trips of async
 * calls cost ten times the read. `entry`, when the caller's directory
 * listing says what the task's entry is, spares an lstat a task.
 *
 * @example
 * ```ts
 * import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { taskPaths } from "../layout.ts";
 * import { readTaskRecord } from "./read-record.ts";
 * const root = mkdtempSync(join(tmpdir(), "outlive-read-"));
 * const p = taskPaths(root, "t-1");
 * mkdirSync(p.dir, { recursive: true });
 * writeFileSync(p.record, "{ half a rec");
 * const r = readTaskRecord(root, "t-1", p);
 * console.log(r.ok || r.problem.kind); // "corrupt"
 * rmSync(root, { recursive: true });
 * ```
 */
export function readTaskRecord(root: string, id: string, p: TaskPaths, entry?: TaskEntryKind): ReadResult {
  const fail = (reason: string): ReadResult => ({ ok: false, id, problem: { kind: "corrupt", reason } });
  if (!TASK_ID_PATTERN.test(id)) return fail("the directory name is not a valid task id");
  const kind = entry ?? entryKindOf(root, id, p);
  if (kind === "symlink") return fail("the task directory is a symlink (not followed)");
  if (kind === "other") return fail("the task entry is not a directory");
  let text: string;
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO put in its place would block an ordinary open for ever.
    fd = openSync(p.record, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ELOOP") return fail("record.json is a symlink (not followed)");
    if (code === "ENOENT") {
      // A listing may be older than the task's removal: a directory gone since says "no such task", not a missing record.
      if (entry !== undefined) entryKindOf(root, id, p);
      return fail(RECORD_MISSING);
    }
    // Out of descriptors says nothing about the record: it must not be quarantined for it.
    if (code === "EMFILE" || code === "ENFILE") {
      throw new OutliveError("E_STORAGE", `Cannot read the storage at ${p.record}: ${(error as Error).message}`, { cause: error });
    }
    return fail(`record.json cannot be read: ${(error as Error).message}`);
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return fail("record.json is not a regular file");
    if (info.size > MAX_RECORD_BYTES) return fail(`record.json is ${info.size} bytes, larger than any record`);
    text = readWhole(fd, info.size);
  } catch (error) {
    return fail(`record.json cannot be read: ${(error as Error).message}`);
  } finally {
    closeSync(fd);
  }
  const parsed = parseRecord(text, id);
  if (!parsed.ok) return { ok: false, id, problem: parsed.problem };
  // Only a live task's io/ is read by path (replay's evidence, observation); a finished one's output is
  // read with O_NOFOLLOW when asked for. Checking only those keeps replay of a long history cheap.
  if (!isTerminal(parsed.record.state)) {
    const ioProblem = taskIoProblem(p);
    if (ioProblem) return fail(ioProblem);
  }
  return parsed;
}
