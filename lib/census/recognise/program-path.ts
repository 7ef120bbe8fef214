import { access, stat } from "node:fs/promises";
import { constants } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";

/** Where a PATH lookup found a program: as an absolute path, and as the exec call spelled it. */
export interface PathMatch {
  /** The file, absolute (relative PATH entries taken against `cwd`). */
  absolute: string;
  /**
   * The path exactly as `execvp` builds it: the PATH entry as written, "/",
   * the name ("bin//x" for an entry "bin/"; just the name for an empty
   * entry). The kernel hands this string to a script's interpreter, so it
   * is what a server script's argv holds.
   */
  asExecuted: string;
}

/**
 * The first executable regular file named `name` on `pathValue`, searched
 * the way `execvp` does (an empty entry means the current folder, relative
 * entries are taken against `cwd`). Null when there is none.
 *
 * @example
 * ```ts
 * import { lookUpPath } from "./program-path.ts";
 * console.log(await lookUpPath("sh", "/nonexistent:/bin/", "/")); // { absolute: "/bin/sh", asExecuted: "/bin//sh" }
 * ```
 */
export async function lookUpPath(name: string, pathValue: string | undefined, cwd: string, signal?: AbortSignal): Promise<PathMatch | null> {
  if (!pathValue) return null;
  for (const dir of pathValue.split(":")) {
    signal?.throwIfAborted();
    const base = dir === "" ? cwd : isAbsolute(dir) ? dir : resolve(cwd, dir);
    const candidate = join(base, name);
    try {
      if (!(await stat(candidate)).isFile()) continue;
      await access(candidate, constants.X_OK);
      return { absolute: candidate, asExecuted: dir === "" ? name : `${dir}/${name}` };
    } catch {
      // Not here (missing, not executable, unreadable folder): execvp moves on too.
    }
  }
  return null;
}

/**
 * The first executable regular file named `name` on `pathValue`, as an
 * absolute path; null when there is none. See {@link lookUpPath}.
 *
 * @example
 * ```ts
 * import { findOnPath } from "./program-path.ts";
 * console.log(await findOnPath("sh", "/nonexistent:/bin:/usr/bin", "/")); // "/bin/sh"
 * ```
 */
export async function findOnPath(name: string, pathValue: string | undefined, cwd: string, signal?: AbortSignal): Promise<string | null> {
  return (await lookUpPath(name, pathValue, cwd, signal))?.absolute ?? null;
}

/**
 * Every form in which the harness may have put a server's program into the
 * child's argv: the configured string itself; for a relative path, that
 * path against the harness's folder; for a bare name, the first match on the
 * harness's PATH, absolute and as `execvp` spelled it (a script's
 * interpreter gets the latter: `bin/srv` for a PATH entry `bin`).
 */
export async function programForms(command: string, cwd: string, pathValue: string | undefined, signal?: AbortSignal): Promise<string[]> {
  const forms = [command];
  if (command.includes("/")) {
    if (!isAbsolute(command)) forms.push(resolve(cwd, command));
  } else {
    const found = await lookUpPath(command, pathValue, cwd, signal);
    if (found !== null) forms.push(found.absolute, found.asExecuted);
  }
  return [...new Set(forms)];
}
