import { execFile } from "node:child_process";
import { renameSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { syncPath, tempPathFor } from "./atomic-write.ts";

/** Makes everything written to the file system holding `path` durable (syncfs(2), via coreutils' `sync -f`). */
export function syncFileSystem(path: string, timeoutMs = 60_000): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile("sync", ["-f", path], { timeout: timeoutMs }, (error) => (error ? reject(error) : resolve()));
  });
}

/**
 * Writes many files with writeFileAtomic's guarantee (a reader sees the old
 * content or the new, and the new survives a crash once this resolves), as
 * one batch: every temp file is written, one flush of the file system makes
 * them durable, every rename follows, and a second flush makes the renames
 * durable. Two flushes instead of two fsyncs per file, which is what lets
 * replay settle thousands of records at once. Where the flush cannot be had
 * (no `sync -f`), each temp file and directory is fsynced instead.
 *
 * @example
 * ```ts
 * import { mkdtempSync, readFileSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { writeFilesAtomic } from "./atomic-batch.ts";
 * const dir = mkdtempSync(join(tmpdir(), "outlive-batch-"));
 * await writeFilesAtomic([{ path: join(dir, "a.json"), data: "1\n" }, { path: join(dir, "b.json"), data: "2\n" }]);
 * console.log(readFileSync(join(dir, "b.json"), "utf8")); // "2\n"
 * rmSync(dir, { recursive: true });
 * ```
 */
export async function writeFilesAtomic(
  files: ReadonlyArray<{ path: string; data: string }>,
  options: { mode?: number; flush?: (path: string) => Promise<void> } = {},
): Promise<void> {
  if (files.length === 0) return;
  const mode = options.mode ?? 0o600;
  const flush = options.flush ?? syncFileSystem;
  const temps: string[] = [];
  try {
    for (const f of files) {
      const temp = tempPathFor(f.path);
      // Listed before the write: a write that fails (ENOSPC) after the open has made the file, and it must go.
      temps.push(temp);
      writeFileSync(temp, f.data, { flag: "wx", mode });
    }
  } catch (error) {
    removeAll(temps);
    throw error;
  }
  const flushed = await flush(files[0].path).then(() => true, () => false);
  if (!flushed) {
    try {
      for (const temp of temps) await syncPath(temp);
    } catch (error) {
      removeAll(temps);
      throw error;
    }
  }
  let firstError: unknown = null;
  files.forEach((f, i) => {
    try {
      renameSync(temps[i], f.path);
    } catch (error) {
      removeAll([temps[i]]);
      firstError ??= error;
    }
  });
  const renamesDurable = flushed && (await flush(files[0].path).then(() => true, () => false));
  if (!renamesDurable) for (const dir of new Set(files.map((f) => dirname(f.path)))) await syncPath(dir);
  if (firstError) throw firstError;
}

function removeAll(paths: string[]): void {
  for (const p of paths) {
    try {
      unlinkSync(p);
    } catch {
      // already gone
    }
  }
}
