import { accessSync, constants, statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { OutliveError } from "../errors.ts";

/**
 * The PATH the wrapper's `/bin/sh` searches when the task's environment has
 * none (dash's and bash's built-in default).
 */
export const DEFAULT_SEARCH_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** Where an argv task's program is, or why it cannot run. */
export type ProgramLookup =
  | { ok: true; path: string }
  | { ok: false; code: "E_NOT_FOUND" | "E_NOT_EXECUTABLE"; message: string };

/**
 * Looks an argv task's program up the way the shell that will `exec` it
 * does: a name with a slash is taken against the task's `cwd`; a bare name
 * is searched on the task's own PATH (empty entries and relative ones
 * against its `cwd`; the shell's default when PATH is unset). The first
 * executable regular file wins; when none is found but a candidate exists
 * that cannot be run (no execute permission, a directory), the answer is
 * `E_NOT_EXECUTABLE` (as the shell's 126), else `E_NOT_FOUND` (127). The
 * message names the program and where it was looked for. Reads the file
 * system, changes nothing.
 *
 * @example
 * ```ts
 * import { lookUpProgram } from "./program-lookup.ts";
 * console.log(lookUpProgram("sh", { PATH: "/nonexistent:/bin" }, "/")); // { ok: true, path: "/bin/sh" }
 * console.log(lookUpProgram("/no/such/binary", {}, "/").ok); // false
 * console.log(lookUpProgram("/etc/passwd", {}, "/")); // { ok: false, code: "E_NOT_EXECUTABLE", ... }
 * ```
 */
export function lookUpProgram(program: string, env: Record<string, string | undefined>, cwd: string): ProgramLookup {
  const shown = JSON.stringify(program);
  if (program.includes("/")) {
    const path = resolve(cwd, program);
    const where = isAbsolute(program) ? path : `${path} (relative to the task's cwd ${cwd})`;
    const k = candidate(path);
    if (k === "runs") return { ok: true, path };
    if (k === "absent") return { ok: false, code: "E_NOT_FOUND", message: `Cannot run ${shown}: ${where} does not exist` };
    return { ok: false, code: "E_NOT_EXECUTABLE", message: `Cannot run ${shown}: ${where} is ${k}` };
  }
  const searchPath = env.PATH ?? DEFAULT_SEARCH_PATH;
  let cannot: string | null = null;
  for (const dir of searchPath.split(":")) {
    const path = join(dir === "" ? cwd : resolve(cwd, dir), program);
    const k = candidate(path);
    if (k === "runs") return { ok: true, path };
    if (k !== "absent" && cannot === null) cannot = `${path} is ${k}`;
  }
  const looked = `the task's PATH (${searchPath === "" ? "empty" : searchPath}${env.PATH === undefined ? ", the shell's default: the task's environment has none" : ""}; cwd ${cwd})`;
  if (cannot !== null) return { ok: false, code: "E_NOT_EXECUTABLE", message: `Cannot run ${shown}: ${cannot}, and nothing else by that name in ${looked} can be run` };
  return { ok: false, code: "E_NOT_FOUND", message: `Cannot run ${shown}: not found in ${looked}` };
}

/**
 * Refuses (E_NOT_FOUND, E_NOT_EXECUTABLE) an argv task whose program cannot
 * run, before anything of the task exists. See {@link lookUpProgram}.
 *
 * @example
 * ```ts
 * import { checkProgram } from "./program-lookup.ts";
 * try { checkProgram(["nosuch-program", "-x"], { PATH: "/bin" }, "/"); }
 * catch (e) { console.log((e as { code: string }).code); } // "E_NOT_FOUND"
 * ```
 */
export function checkProgram(argv: readonly string[], env: Record<string, string | undefined>, cwd: string): void {
  const found = lookUpProgram(argv[0], env, cwd);
  if (!found.ok) throw new OutliveError(found.code, `${found.message}; nothing was started or stored`);
}

function candidate(path: string): "runs" | "absent" | "a directory" | "not executable" | "not a regular file" {
  try {
    const info = statSync(path);
    if (info.isDirectory()) return "a directory";
    if (!info.isFile()) return "not a regular file";
    accessSync(path, constants.X_OK);
    return "runs";
  } catch (error) {
    const code = (error as { code?: string }).code;
    // ENOENT, ENOTDIR (a PATH entry that is a file), ELOOP, ENAMETOOLONG: the shell moves on too.
    return code === "EACCES" || code === "EPERM" ? "not executable" : "absent";
  }
}
