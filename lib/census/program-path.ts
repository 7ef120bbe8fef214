import { access, stat } from "node:fs/promises";
import { constants } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";

/**
 * The first executable regular file named `name` on `pathValue`, searched
 * the way `execvp` does (an empty entry means the current folder, relative
 * entries are taken against `cwd`). Null when there is none.
 *
 * @example
 * ```ts
 * import { findOnPath } from "./program-path.ts";
 * console.log(await findOnPath("sh", "/nonexistent:/bin:/usr/bin", "/")); // "/bin/sh"
 * ```
 */
export async function findOnPath(name: string, pathValue: string | undefined, cwd: string, signal?: AbortSignal): Promise<string | null> {
  if (!pathValue) return null;
  for (const dir of pathValue.split(":")) {
    signal?.throwIfAborted();
    const base = dir === "" ? cwd : isAbsolute(dir) ? dir : resolve(cwd, dir);
    const candidate = join(base, name);
    try {
      if (!(await stat(candidate)).isFile()) continue;
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here (missing, not executable, unreadable folder): execvp moves on too.
    }
  }
  return null;
}

/**
 * Every form in which the harness may have put a server's program into the
 * child's argv: the configured string itself; for a relative path, that
 * path against the harness's folder; for a bare name, the first match on the
 * harness's PATH.
 */
export async function programForms(command: string, cwd: string, pathValue: string | undefined, signal?: AbortSignal): Promise<string[]> {
  const forms = [command];
  if (command.includes("/")) {
    if (!isAbsolute(command)) forms.push(resolve(cwd, command));
  } else {
    const found = await findOnPath(command, pathValue, cwd, signal);
    if (found !== null) forms.push(found);
  }
  return [...new Set(forms)];
}
