import { randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, writeSync, fsyncSync, type Stats } from "node:fs";
import { dirname } from "node:path";
import { OutliveError } from "../errors.ts";

/** Fewer characters than this is a token a caller could guess; such a file is refused. */
export const MIN_TOKEN_CHARS = 16;

/** The bytes of randomness in a token this module makes (base64url: 43 characters). */
const TOKEN_BYTES = 32;

/**
 * The bearer token of `outlive mcp --http`, from `path`; when there is no
 * file there, one is made with O_EXCL and mode 0600 holding a fresh random
 * token (`made` is then true). The door leads into the user's shell, so a
 * token file anyone else could have written or read is refused rather than
 * used: a symlink, a file of another user, one group or others may read or
 * write, one that is not a regular file, or one holding too short a token.
 * The file is checked again on the descriptor it is read from, so a file
 * swapped in between the check and the read is caught too.
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { loadToken } from "./token-file.ts";
 * const dir = mkdtempSync(join(tmpdir(), "token-"));
 * const first = loadToken(join(dir, "mcp-token"));
 * console.log(first.made, loadToken(join(dir, "mcp-token")).token === first.token); // true true
 * rmSync(dir, { recursive: true });
 * ```
 */
export function loadToken(path: string): { token: string; made: boolean } {
  const existing = statOrNull(path);
  if (existing === null) {
    const made = makeToken(path);
    if (made !== null) return { token: made, made: true };
    // Another process made it between our look and our O_EXCL open: read theirs.
  }
  return { token: readToken(path), made: false };
}

function statOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw tokenError(path, `could not be read: ${(error as Error).message}`);
  }
}

/** The fresh token, or null when a file appeared at `path` first. */
function makeToken(path: string): string | null {
  // The default file lives under the storage's control directory, which is the owner's alone.
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return null;
    throw tokenError(path, `could not be made: ${(error as Error).message}`);
  }
  const token = randomBytes(TOKEN_BYTES).toString("base64url");
  try {
    writeSync(fd, `${token}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return token;
}

function readToken(path: string): string {
  refuseUnsafe(path, lstatSync(path));
  let fd: number;
  try {
    // O_NOFOLLOW: a symlink put in place after the lstat is refused by the open itself.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw tokenError(path, code === "ELOOP" ? "is a symbolic link; point --token-file at the file itself" : `could not be read: ${(error as Error).message}`);
  }
  try {
    refuseUnsafe(path, fstatSync(fd));
    const token = readFileSync(fd, "utf8").trim();
    if (token.length < MIN_TOKEN_CHARS) {
      throw tokenError(path, `holds ${token.length === 0 ? "no token" : `a token of ${token.length} characters`}; expected one line of at least ${MIN_TOKEN_CHARS} (remove the file and outlive makes a random one)`);
    }
    if (/\s/.test(token)) throw tokenError(path, "holds white space inside the token; expected one line, the token alone");
    return token;
  } finally {
    closeSync(fd);
  }
}

/** Throws when the file at `path` could have been read or written by anyone but its owner, who must be us. */
function refuseUnsafe(path: string, stat: Stats): void {
  if (stat.isSymbolicLink()) throw tokenError(path, "is a symbolic link; point --token-file at the file itself");
  if (!stat.isFile()) throw tokenError(path, "is not a regular file");
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) throw tokenError(path, `belongs to uid ${stat.uid}, not to this user (uid ${uid})`);
  const loose = stat.mode & 0o077;
  if (loose !== 0) {
    throw tokenError(path, `has mode ${(stat.mode & 0o777).toString(8).padStart(4, "0")}, so group or others may read or write it; expected 0600 (chmod 600 ${path})`);
  }
}

function tokenError(path: string, problem: string): OutliveError {
  return new OutliveError("E_BAD_OPTION", `the token file ${path} ${problem}`);
}
