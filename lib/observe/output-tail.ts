import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import type { TaskPaths } from "../store/layout.ts";
import { readDropped, streamFiles } from "../output/dropped.ts";

export interface OutputSummary {
  /** When the task last wrote to stdout or stderr; null if it never did. */
  lastOutputAt: string | null;
  /** The last bytes of stdout, then of stderr (marked), as UTF-8 text. */
  tail: string;
  stdoutBytes: number;
  stderrBytes: number;
}

/** Reads how much a task wrote, when it last did, and the tail of it. */
export async function summarizeOutput(paths: TaskPaths, tailBytes = 2048): Promise<OutputSummary> {
  // Never below what the output bound dropped: those bytes may be holes, read back as zeros.
  const floor = (stream: "stdout" | "stderr") => readDropped(streamFiles(paths, stream).dropped);
  const [out, err] = [readTailNow(paths.stdout, tailBytes, floor("stdout")), readTailNow(paths.stderr, tailBytes, floor("stderr"))];
  const times = [out, err].filter((f) => f.size > 0).map((f) => f.mtimeMs);
  let tail = out.text;
  if (err.text) tail += `${tail && !tail.endsWith("\n") ? "\n" : ""}[stderr]\n${err.text}`;
  return {
    lastOutputAt: times.length ? new Date(Math.max(...times)).toISOString() : null,
    tail,
    stdoutBytes: out.size,
    stderrBytes: err.size,
  };
}

/** The last `bytes` of a file (all of it when smaller), or nothing when it does not exist. */
export async function readTail(path: string, bytes: number): Promise<{ text: string; size: number; mtimeMs: number }> {
  return readTailNow(path, bytes);
}

/** Synchronous: small reads of local files, done for every settled task. */
export function readTailNow(path: string, bytes: number, floor = 0): { text: string; size: number; mtimeMs: number } {
  let fd: number;
  try {
    // Never through a symlink, never blocked by a FIFO: output files are the wrapper's regular files.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return { text: "", size: 0, mtimeMs: 0 };
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return { text: "", size: 0, mtimeMs: 0 };
    const length = Math.max(0, Math.min(bytes, info.size - floor));
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, info.size - length);
    return { text: buffer.toString("utf8"), size: info.size, mtimeMs: info.mtimeMs };
  } finally {
    closeSync(fd);
  }
}
