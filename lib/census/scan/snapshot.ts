import type { ProcessSnapshot } from "./process-list.ts";
import { scanProc } from "./proc-scan.ts";
import { scanPs } from "./ps-scan.ts";

export type { CensusProcess, ProcessSnapshot } from "./process-list.ts";

export interface ProcessSnapshotOptions {
  /**
   * Where to read from. `"auto"` (the default) reads `/proc` on Linux and
   * runs `ps` elsewhere.
   */
  source?: "auto" | "proc" | "ps";
  /** The proc filesystem to read; default `/proc`. Tests point it elsewhere. */
  procRoot?: string;
  /** The `ps` program for the fallback; default `ps` from PATH. */
  psCommand?: string;
  /** Milliseconds the `ps` fallback may take; default 10 000. */
  psTimeoutMs?: number;
}

/**
 * Lists every process now. Never throws: a failure to list is an
 * incomplete snapshot that names the problem.
 *
 * @example
 * ```ts
 * import { takeSnapshot } from "./snapshot.ts";
 * const snap = await takeSnapshot();
 * console.log(snap.complete, snap.processes.some((p) => p.pid === process.pid)); // true true
 * ```
 */
export async function takeSnapshot(options: ProcessSnapshotOptions = {}): Promise<ProcessSnapshot> {
  const source = options.source ?? "auto";
  const useProc = source === "proc" || (source === "auto" && process.platform === "linux");
  if (useProc) return scanProc(options.procRoot ?? "/proc");
  return scanPs({ command: options.psCommand ?? "ps", timeoutMs: options.psTimeoutMs ?? 10_000 });
}
