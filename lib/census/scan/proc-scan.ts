import { closeSync, openSync, readdirSync, readSync } from "node:fs";
import { isGone, parseProcStat } from "../../proc/stat.ts";
import { censusError, describeThrown, errnoCode, type CensusError } from "../census-error.ts";
import type { CensusProcess, ProcessSnapshot } from "./process-list.ts";

/**
 * Reads every `/proc/<pid>` now. Synchronous on purpose: for a couple of
 * thousand tiny files, blocking reads into one reused buffer are several
 * times faster than the promise API, and the scan is what makes the census
 * cheaper than spawning `ps`.
 *
 * @example
 * ```ts
 * import { scanProc } from "./proc-scan.ts";
 * console.log(scanProc("/proc").processes.some((p) => p.pid === process.pid)); // true
 * ```
 */
export function scanProc(procRoot: string): ProcessSnapshot {
  const takenAt = Date.now();
  const problems: CensusError[] = [];
  const processes: CensusProcess[] = [];
  let names: string[];
  try {
    names = readdirSync(procRoot);
  } catch (error) {
    problems.push(censusError("snapshot-failed", `cannot list ${procRoot}: ${describeThrown(error)}`));
    return { source: "proc", exactArgv: true, complete: false, problems, processes, takenAt };
  }
  const reader = new ProcFileReader();
  for (const name of names) {
    const first = name.charCodeAt(0);
    if (first < 48 || first > 57 || !/^\d+$/.test(name)) continue;
    const seen = readOne(reader, procRoot, name, problems);
    if (seen) processes.push(seen);
  }
  return { source: "proc", exactArgv: true, complete: problems.length === 0, problems, processes, takenAt };
}

/**
 * One process read now, for a pid that a later source (a cgroup's member
 * list) names but the scan did not see. Null when it is gone; a problem is
 * pushed when it exists but cannot be read.
 *
 * @example
 * ```ts
 * import { readProcess } from "./proc-scan.ts";
 * console.log(readProcess("/proc", process.pid, [])?.pid === process.pid); // true
 * ```
 */
export function readProcess(procRoot: string, pid: number, problems: CensusError[]): CensusProcess | null {
  return readOne(new ProcFileReader(), procRoot, String(pid), problems);
}

function readOne(reader: ProcFileReader, procRoot: string, name: string, problems: CensusError[]): CensusProcess | null {
  const dir = `${procRoot}/${name}`;
  let statText: string;
  let cmdline: string;
  try {
    // stat is ASCII apart from the name; latin1 decodes it fastest and never fails.
    statText = reader.read(`${dir}/stat`, "latin1");
    // utf8 keeps non-ASCII arguments readable; configs are compared after the same decoding.
    cmdline = reader.read(`${dir}/cmdline`, "utf8");
  } catch (error) {
    if (isGone(error)) return null;
    problems.push(censusError("snapshot-incomplete", `cannot read ${dir}: ${errnoCode(error)} ${describeThrown(error)}`));
    return null;
  }
  const stat = parseProcStat(statText);
  if (!stat || String(stat.pid) !== name) {
    problems.push(censusError("snapshot-incomplete", `${dir}/stat is not a stat line: ${JSON.stringify(statText.slice(0, 120))}`));
    return null;
  }
  return {
    pid: stat.pid,
    ppid: stat.ppid,
    pgid: stat.pgid,
    sid: stat.sid,
    state: stat.state,
    startTime: stat.startTime,
    argv: splitCmdline(cmdline),
    name: stat.comm,
  };
}

/**
 * Splits `/proc/<pid>/cmdline` on NUL. The kernel ends each argument with a
 * NUL, so one trailing NUL is dropped; an argument that is itself empty
 * stays an empty string, which keeps argv exact.
 *
 * @example
 * ```ts
 * import { splitCmdline } from "./proc-scan.ts";
 * console.log(splitCmdline("node\0a b\0\0")); // ["node", "a b", ""]
 * ```
 */
export function splitCmdline(text: string): string[] {
  if (text.length === 0) return [];
  const body = text.endsWith("\0") ? text.slice(0, -1) : text;
  return body.split("\0");
}

/** Reads small files whole into one growing buffer, so a scan allocates little. */
class ProcFileReader {
  private buffer = Buffer.allocUnsafe(64 * 1024);

  read(path: string, encoding: "latin1" | "utf8"): string {
    const fd = openSync(path, "r");
    try {
      let length = 0;
      for (;;) {
        const room = this.buffer.length - length;
        const got = readSync(fd, this.buffer, length, room, null);
        length += got;
        // A /proc read that does not fill the room has reached the end; only
        // a full one can have more behind it. Saves an extra read per file.
        if (got < room) break;
        const bigger = Buffer.allocUnsafe(this.buffer.length * 2);
        this.buffer.copy(bigger, 0, 0, length);
        this.buffer = bigger;
      }
      return this.buffer.toString(encoding, 0, length);
    } finally {
      closeSync(fd);
    }
  }
}
