import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { readDropped } from "./dropped.ts";
import type { OutputChunk, OutputStream } from "./request.ts";
import { trustedPart } from "./split.ts";

/**
 * Reads what a stream holds from `offset` on, at most `maxBytes` of it:
 * a `missed` chunk first when the bound dropped bytes there, then the data.
 * Empty when nothing new is there yet (or the file does not exist yet).
 * The file is opened without following a symlink and never blocks on a FIFO.
 */
export function readChunks(
  stream: OutputStream,
  files: { data: string; dropped: string },
  offset: number,
  maxBytes: number,
): OutputChunk[] {
  const chunks: OutputChunk[] = [];
  const before = readDropped(files.dropped);
  if (before > offset) {
    chunks.push({ stream, offset, data: new Uint8Array(0), missed: before - offset });
    offset = before;
  }
  let fd: number;
  try {
    fd = openSync(files.data, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return chunks;
  }
  let data: Buffer;
  try {
    const info = fstatSync(fd);
    if (!info.isFile() || info.size <= offset) return chunks;
    const length = Math.min(maxBytes, info.size - offset);
    data = Buffer.alloc(length);
    let got = 0;
    while (got < length) {
      const n = readSync(fd, data, got, length - got, offset + got);
      if (n === 0) break;
      got += n;
    }
    data = data.subarray(0, got);
  } finally {
    closeSync(fd);
  }
  // The marker is written before each punch: read again now, anything below it may have become a hole meanwhile.
  const { missed, keepFrom } = trustedPart(offset, data.byteLength, readDropped(files.dropped));
  if (missed > 0) {
    chunks.push({ stream, offset, data: new Uint8Array(0), missed });
    offset += missed;
  }
  const kept = data.subarray(keepFrom);
  if (kept.byteLength > 0) chunks.push({ stream, offset, data: kept, missed: 0 });
  return chunks;
}
