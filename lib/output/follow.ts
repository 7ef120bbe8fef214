import { watch } from "node:fs";
import type { TaskPaths } from "../store/layout.ts";
import { streamFiles } from "./dropped.ts";
import { readChunks } from "./read-chunk.ts";
import type { OutputChunk, OutputRequest } from "./request.ts";

export interface FollowOptions {
  paths: TaskPaths;
  request: OutputRequest;
  /** True once the task is terminal: then what is on disk is all there will be. */
  isDone: () => boolean | Promise<boolean>;
  /** Ends the iteration at once (Ctrl-C, a closing supervisor). */
  signal?: AbortSignal;
  /** Longest wait between looks when no file event comes (default 250 ms). Events wake it at once. */
  pollMs?: number;
  /** Largest chunk read at once (default 64 KiB). */
  chunkBytes?: number;
}

/**
 * Yields a task's output from each stream's start offset: what is there,
 * then what comes, until the task is terminal and every stream is read to
 * its end. It never holds the files open between looks, so it follows
 * across the trimmer's punches, and the `io/` directory's change events
 * wake it within a millisecond or so of a write.
 */
export async function* followOutput(o: FollowOptions): AsyncGenerator<OutputChunk, void, undefined> {
  const pollMs = o.pollMs ?? 250;
  const chunkBytes = o.chunkBytes ?? 64 * 1024;
  const cursors = o.request.map((r) => ({ stream: r.stream, offset: r.from, files: streamFiles(o.paths, r.stream) }));
  let wake: (() => void) | null = null;
  let stirred = false;
  const stir = () => {
    stirred = true;
    wake?.();
  };
  let watcher: ReturnType<typeof watch> | null = null;
  try {
    watcher = watch(o.paths.io, { persistent: false }, stir);
    watcher.on("error", () => watcher?.close());
  } catch {
    // No io/ yet or no inotify: the poll still sees every byte, only later.
  }
  o.signal?.addEventListener("abort", stir, { once: true });
  try {
    for (;;) {
      if (o.signal?.aborted) return;
      // Asked before reading: a task that was over before this pass has written all it will by now.
      const done = await o.isDone();
      stirred = false;
      let progressed = true;
      while (progressed) {
        progressed = false;
        for (const c of cursors) {
          for (const chunk of readChunks(c.stream, c.files, c.offset, chunkBytes)) {
            if (o.signal?.aborted) return;
            c.offset = chunk.offset + chunk.missed + chunk.data.byteLength;
            progressed = true;
            yield chunk;
          }
        }
      }
      if (done) return;
      if (!stirred) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, pollMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = null;
      }
    }
  } finally {
    watcher?.close();
    o.signal?.removeEventListener("abort", stir);
  }
}
