import type { CensusError } from "./census-error.ts";
import { scanProc } from "./proc-scan.ts";
import { scanPs } from "./ps-scan.ts";

/** One process as the census saw it. */
export interface CensusProcess {
  pid: number;
  ppid: number;
  pgid: number;
  /** Session id; null where the source does not give it (`ps` fallback). */
  sid: number | null;
  /** One letter: R, S, D, Z, T, t, X, I, … */
  state: string;
  /** Start time in clock ticks since boot (with the pid, an identity); null from `ps`. */
  startTime: string | null;
  /** The argument vector. Empty for kernel threads and zombies. */
  argv: readonly string[];
  /** The kernel's short command name, for processes whose argv is empty. */
  name: string;
}

/** Every process on the machine at one moment, and whether the list is whole. */
export interface ProcessSnapshot {
  source: "proc" | "ps";
  /**
   * True when each argv is the kernel's exact vector (`/proc/<pid>/cmdline`
   * split on NUL). `ps` joins arguments with spaces, so "a b" and "a","b"
   * look alike there, and no process can be proven to be a configured server.
   */
  exactArgv: boolean;
  /**
   * False when anything other than a vanished process could not be read.
   * An incomplete snapshot never answers "nothing else runs here".
   */
  complete: boolean;
  problems: CensusError[];
  processes: CensusProcess[];
  /** Milliseconds since the epoch when the scan began. */
  takenAt: number;
}

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
