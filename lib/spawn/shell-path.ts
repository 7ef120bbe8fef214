import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";

/**
 * The shell a `shell` task runs in when none is named: bash where it is
 * installed, else `/bin/sh`. bash because it runs a plain `trap … EXIT`
 * when a signal ends it (outlive's kill ladder, the watchdog's deadline);
 * dash, Debian's `/bin/sh`, skips EXIT traps on a fatal signal.
 *
 * @example
 * ```ts
 * import { defaultShellPath } from "./shell-path.ts";
 * console.log(defaultShellPath({ PATH: "/nonexistent" }, ["/nonexistent/bash"])); // "/bin/sh"
 * ```
 */
export function defaultShellPath(
  env: Record<string, string | undefined> = process.env,
  candidates: readonly string[] = ["/bin/bash", "/usr/bin/bash", ...(env.PATH ?? "").split(delimiter).filter(isAbsolute).map((d) => join(d, "bash"))],
): string {
  return candidates.find((path) => shellPathProblem(path) === null) ?? "/bin/sh";
}

/**
 * Why `path` cannot be a task's shell (not absolute, missing, not a regular
 * file, not executable), or null when it can.
 *
 * @example
 * ```ts
 * import { shellPathProblem } from "./shell-path.ts";
 * console.log(shellPathProblem("/bin/sh")); // null
 * console.log(shellPathProblem("bash")); // "not an absolute path"
 * ```
 */
export function shellPathProblem(path: string): string | null {
  if (!isAbsolute(path)) return "not an absolute path";
  try {
    if (!statSync(path).isFile()) return "not a regular file";
    accessSync(path, constants.X_OK);
    return null;
  } catch (error) {
    const code = (error as { code?: string }).code;
    return code === "ENOENT" ? "no such file" : code === "EACCES" ? "not executable" : (error as Error).message;
  }
}
