/**
 * The process list's shapes, shared by the scanners (`/proc`, `ps`) and the
 * census that reads them, so neither imports the other.
 *
 * @module
 */
import type { CensusError } from "../census-error.ts";

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
