import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { readDropped } from "./dropped.ts";

/**
 * Where the last `n` lines of `buf` begin, when `buf` is the end of a
 * stream; -1 when `buf` holds fewer than `n` line breaks before its final
 * line (read further back). A final line break ends the last line, it
 * does not start another. Pure.
 *
 * @example
 * ```ts
 * import { startOfLastLines } from "./last-lines.ts";
 * const buf = new TextEncoder().encode("a\nb\nc\n");
 * console.log(startOfLastLines(buf, 2)); // 2
 * console.log(startOfLastLines(buf, 5)); // -1
 * ```
 */
export function startOfLastLines(buf: Uint8Array, n: number): number {
  if (n === 0) return buf.byteLength;
  let end = buf.byteLength;
  if (end > 0 && buf[end - 1] === 0x0a) end--;
  let seen = 0;
  for (let i = end - 1; i >= 0; i--) {
    if (buf[i] === 0x0a && ++seen === n) return i + 1;
  }
  return -1;
}

/**
 * The absolute offset where the last `n` lines of a stream's file begin,
 * read backwards in blocks, never below what the bound dropped.
 */
export function offsetOfLastLines(files: { data: string; dropped: string }, n: number, blockBytes = 64 * 1024): number {
  let fd: number;
  try {
    fd = openSync(files.data, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return 0;
  }
  try {
    const size = fstatSync(fd).size;
    const floor = Math.min(readDropped(files.dropped), size);
    let start = size;
    for (;;) {
      start = Math.max(floor, start - blockBytes);
      const buf = Buffer.alloc(size - start);
      readSync(fd, buf, 0, buf.byteLength, start);
      const at = startOfLastLines(buf, n);
      if (at >= 0) return start + at;
      if (start === floor) return floor;
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Where the oldest whole line still kept begins: 0 when nothing was
 * dropped, else just past the first line break at or after the dropped
 * offset (the line it cuts is not shown half), or the dropped offset when
 * no break follows within `blockBytes`.
 */
export function offsetOfKeptLines(files: { data: string; dropped: string }, blockBytes = 64 * 1024): number {
  const floor = readDropped(files.dropped);
  if (floor === 0) return 0;
  let fd: number;
  try {
    fd = openSync(files.data, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return floor;
  }
  try {
    const buf = Buffer.alloc(blockBytes);
    // The byte before the floor tells whether the floor itself starts a line.
    const got = readSync(fd, buf, 0, blockBytes, floor - 1);
    const at = buf.subarray(0, got).indexOf(0x0a);
    return at < 0 ? floor : floor + at;
  } finally {
    closeSync(fd);
  }
}
