import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/**
 * The live processes with `arg` as one of their arguments, read from
 * `/proc/<pid>/cmdline`. How replay finds the wrapper of a spawn whose pid
 * was never recorded (its argv names the task's own io files), or the
 * `systemd-run` still about to exec it. Processes that end meanwhile, or
 * whose cmdline cannot be read, are not listed.
 *
 * @example
 * ```ts
 * import { processesWithArg } from "./arg-holders.ts";
 * console.log(processesWithArg("/no/such/argument")); // []
 * ```
 */
export function processesWithArg(arg: string, procRoot = "/proc"): number[] {
  const found: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync(procRoot);
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`${procRoot}/${entry}/cmdline`, "latin1");
    } catch {
      continue;
    }
    if (cmdline.includes(arg) && cmdline.split("\0").includes(arg)) found.push(Number(entry));
  }
  return found;
}

/**
 * The live processes with `arg` as one of their arguments whose stdout (fd
 * 1) is the file `path`: how replay finds the outlive-shim of a spawn whose
 * pid was never recorded (`outlive-shim ID`, its stdout the task's
 * `io/stdout`), or the `systemd-run` still about to exec it, among every
 * other process that happens to name the same id (`outlive wait ID`).
 *
 * @example
 * ```ts
 * import { processesWithArgWriting } from "./arg-holders.ts";
 * console.log(processesWithArgWriting("t-none", "/no/such/io/stdout")); // []
 * ```
 */
export function processesWithArgWriting(arg: string, path: string, procRoot = "/proc"): number[] {
  return processesWithArg(arg, procRoot).filter((pid) => {
    try {
      return readlinkSync(`${procRoot}/${pid}/fd/1`) === path;
    } catch {
      return false;
    }
  });
}
