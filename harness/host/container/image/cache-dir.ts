import { mkdirSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { ContainerError } from "../errors.ts";

/**
 * Where root file systems and images are kept when no `cacheDir` is given:
 * `$OUTLIVE_CONTAINER_CACHE`, else `$XDG_CACHE_HOME/outlive`, else
 * `~/.cache/outlive`, as Playwright and Puppeteer keep their browsers. Not
 * inside the package (`node_modules/outlive/container/cache`), which every
 * `npm ci` of a user's project wipes. A relative `$XDG_CACHE_HOME` is
 * ignored, as the XDG spec says. Pure.
 *
 * @example
 * ```ts
 * import { defaultCacheDir } from "./cache-dir.ts";
 * console.log(defaultCacheDir({ XDG_CACHE_HOME: "/home/me/.cache" }, "/home/me")); // "/home/me/.cache/outlive"
 * console.log(defaultCacheDir({ XDG_CACHE_HOME: "rel" }, "/home/me")); // "/home/me/.cache/outlive"
 * console.log(defaultCacheDir({ OUTLIVE_CONTAINER_CACHE: "/srv/c" }, "/home/me")); // "/srv/c"
 * ```
 */
export function defaultCacheDir(env: Record<string, string | undefined> = process.env, home = homedir()): string {
  const named = env.OUTLIVE_CONTAINER_CACHE;
  if (named) return named;
  const xdg = env.XDG_CACHE_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(home, ".cache"), "outlive");
}

/**
 * Makes the cache directory when it is missing, and refuses one this user
 * does not own or that group or others may write: what is built there is
 * booted as root, so a cache another user can change is a door into root.
 * A symlink is followed (a shared cache) and its target is what is checked.
 */
export function checkCacheDir(dir: string, uid = process.getuid?.()): string {
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const target = realpathSync(dir);
  const info = statSync(target);
  if (!info.isDirectory()) throw new ContainerError("bad-option", `The container cache ${dir} is not a directory`);
  if (uid !== undefined && info.uid !== uid) {
    throw new ContainerError("bad-option", `The container cache ${target} belongs to uid ${info.uid}, not this user (${uid}); refusing it: pass --cache DIR with a directory of your own`);
  }
  if ((info.mode & 0o022) !== 0) {
    throw new ContainerError("bad-option", `The container cache ${target} is writable by ${info.mode & 0o002 ? "others" : "its group"} (mode ${(info.mode & 0o777).toString(8)}); refusing it: chmod go-w it or pass --cache DIR`);
  }
  return dir;
}
