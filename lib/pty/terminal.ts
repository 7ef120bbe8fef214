import { execFile } from "node:child_process";
import { closeSync, constants, fstatSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { OutliveError } from "../errors.ts";
import { type PtyPaths } from "./holder.ts";
import { checkPtySize, type PtySize } from "./size.ts";

/** Where a PTY task's terminal is: its session leader and its pts. */
export interface PtyInfo {
  pid: number;
  tty: string;
}

/**
 * The terminal's `PID TTY`, or null while the holder has not written it (or never will).
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { Supervisor } from "../supervisor/supervisor.ts";
 * import { controls, ptyPaths, readPtyInfo, resizeTerminal, writeTerminal } from "./mod.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-pty-"));
 * const sup = await Supervisor.open({ storage, log: () => {} });
 * await sup.run({ id: "t", argv: ["cat"], pty: {} });
 * const paths = ptyPaths(join(storage, "tasks", "t"));
 * const info = readPtyInfo(paths)!;
 * console.log(info.tty.startsWith("/dev/pts/"), controls(info)); // true true
 * console.log(await resizeTerminal("t", paths, { cols: 100, rows: 30 })); // { cols: 100, rows: 30 }
 * await writeTerminal("t", paths, "\x04"); // Ctrl-D: end of input for cat
 * console.log((await sup.wait("t")).exitCode); // 0
 * await sup.close();
 * rmSync(storage, { recursive: true });
 * ```
 */
export function readPtyInfo(paths: PtyPaths): PtyInfo | null {
  let text: string;
  try {
    text = readFileSync(paths.info, "utf8");
  } catch {
    return null;
  }
  const m = /^(\d+) (\/dev\/pts\/\d+)\n$/.exec(text);
  return m ? { pid: Number(m[1]), tty: m[2] } : null;
}

/**
 * Hands bytes to a task's terminal, as if typed. Refuses (E_PTY_CLOSED) when
 * no holder reads the FIFO any more, and (E_PTY_UNSAFE) when the FIFO is not
 * a 0600 FIFO of this user: input goes only to a channel only its owner can
 * reach. Several writers may write at once: each `write` of up to 4096 bytes
 * (PIPE_BUF) arrives whole, longer ones may interleave with another writer's.
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { Supervisor } from "../supervisor/supervisor.ts";
 * import { controls, ptyPaths, readPtyInfo, resizeTerminal, writeTerminal } from "./mod.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-pty-"));
 * const sup = await Supervisor.open({ storage, log: () => {} });
 * await sup.run({ id: "t", argv: ["cat"], pty: {} });
 * const paths = ptyPaths(join(storage, "tasks", "t"));
 * const info = readPtyInfo(paths)!;
 * console.log(info.tty.startsWith("/dev/pts/"), controls(info)); // true true
 * console.log(await resizeTerminal("t", paths, { cols: 100, rows: 30 })); // { cols: 100, rows: 30 }
 * await writeTerminal("t", paths, "\x04"); // Ctrl-D: end of input for cat
 * console.log((await sup.wait("t")).exitCode); // 0
 * await sup.close();
 * rmSync(storage, { recursive: true });
 * ```
 */
export async function writeTerminal(id: string, paths: PtyPaths, data: string | Uint8Array): Promise<void> {
  const writer = openTerminal(id, paths);
  try {
    await writer.write(data);
  } finally {
    writer.close();
  }
}

/** A terminal's input held open, for a stream of keystrokes (attach): checked once, then one write per chunk. */
export interface TerminalWriter {
  write(data: string | Uint8Array): Promise<void>;
  close(): void;
}

/**
 * Opens a task's terminal for input, with the checks of `writeTerminal`.
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { Supervisor } from "../supervisor/supervisor.ts";
 * import { openTerminal, ptyPaths } from "./mod.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-pty-"));
 * const sup = await Supervisor.open({ storage, log: () => {} });
 * await sup.run({ id: "t", argv: ["cat"], pty: {} });
 * const keys = openTerminal("t", ptyPaths(join(storage, "tasks", "t")));
 * for (const k of ["h", "i", "\n", "\x04"]) await keys.write(k);
 * keys.close();
 * console.log((await sup.wait("t")).exitCode); // 0
 * await sup.close();
 * rmSync(storage, { recursive: true });
 * ```
 */
export function openTerminal(id: string, paths: PtyPaths): TerminalWriter {
  let fd: number;
  try {
    // Non-blocking, so a FIFO with no reader is an error now, not a hang.
    fd = openSync(paths.input, constants.O_WRONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENXIO" || code === "ENOENT") throw closed(id, code);
    throw new OutliveError("E_PTY_CLOSED", `Could not open the terminal of task ${id}: ${(error as Error).message}`, { cause: error });
  }
  const st = fstatSync(fd);
  if (!st.isFIFO() || (st.mode & 0o777) !== 0o600 || (process.getuid && st.uid !== process.getuid())) {
    closeSync(fd);
    throw new OutliveError("E_PTY_UNSAFE", `The input of task ${id}'s terminal (${paths.input}) is not a 0600 FIFO of this user; nothing was written`);
  }
  return {
    async write(data) {
      const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
      let off = 0;
      while (off < bytes.length) {
        try {
          off += writeSync(fd, bytes, off, Math.min(4096, bytes.length - off));
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === "EAGAIN") await new Promise((r) => setTimeout(r, 5));
          else if (code === "EPIPE") throw closed(id, code);
          else throw error;
        }
      }
    },
    close: () => closeSync(fd),
  };
}

/**
 * Sets the size of a task's terminal: TIOCSWINSZ on its pts (through
 * `stty -F`), which the kernel follows with SIGWINCH to the terminal's
 * foreground group. The pts is first checked to still be the controlling
 * terminal of the task's session leader, so a pts number handed to another
 * session after the task ended is never touched.
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { Supervisor } from "../supervisor/supervisor.ts";
 * import { controls, ptyPaths, readPtyInfo, resizeTerminal, writeTerminal } from "./mod.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-pty-"));
 * const sup = await Supervisor.open({ storage, log: () => {} });
 * await sup.run({ id: "t", argv: ["cat"], pty: {} });
 * const paths = ptyPaths(join(storage, "tasks", "t"));
 * const info = readPtyInfo(paths)!;
 * console.log(info.tty.startsWith("/dev/pts/"), controls(info)); // true true
 * console.log(await resizeTerminal("t", paths, { cols: 100, rows: 30 })); // { cols: 100, rows: 30 }
 * await writeTerminal("t", paths, "\x04"); // Ctrl-D: end of input for cat
 * console.log((await sup.wait("t")).exitCode); // 0
 * await sup.close();
 * rmSync(storage, { recursive: true });
 * ```
 */
export async function resizeTerminal(id: string, paths: PtyPaths, size: { cols: number; rows: number }): Promise<PtySize> {
  const checked = checkPtySize(size, "size");
  const info = readPtyInfo(paths);
  if (!info || !controls(info)) throw closed(id, "no live session leader on its terminal");
  await new Promise<void>((resolve, reject) => {
    execFile("stty", ["-F", info.tty, "cols", String(checked.cols), "rows", String(checked.rows)], (error, _out, stderr) => {
      if (error) reject(new OutliveError("E_PTY_CLOSED", `Could not resize the terminal of task ${id}: ${String(stderr).trim() || error.message}`));
      else resolve();
    });
  });
  return checked;
}

/**
 * Is `info.tty` the controlling terminal of `info.pid`? (`tty_nr` in /proc/PID/stat against the pts's device number.)
 *
 * @example
 * ```ts
 * import { mkdtempSync, rmSync } from "node:fs";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { Supervisor } from "../supervisor/supervisor.ts";
 * import { controls, ptyPaths, readPtyInfo, resizeTerminal, writeTerminal } from "./mod.ts";
 * const storage = mkdtempSync(join(tmpdir(), "outlive-pty-"));
 * const sup = await Supervisor.open({ storage, log: () => {} });
 * await sup.run({ id: "t", argv: ["cat"], pty: {} });
 * const paths = ptyPaths(join(storage, "tasks", "t"));
 * const info = readPtyInfo(paths)!;
 * console.log(info.tty.startsWith("/dev/pts/"), controls(info)); // true true
 * console.log(await resizeTerminal("t", paths, { cols: 100, rows: 30 })); // { cols: 100, rows: 30 }
 * await writeTerminal("t", paths, "\x04"); // Ctrl-D: end of input for cat
 * console.log((await sup.wait("t")).exitCode); // 0
 * await sup.close();
 * rmSync(storage, { recursive: true });
 * ```
 */
export function controls(info: PtyInfo): boolean {
  try {
    const stat = readFileSync(`/proc/${info.pid}/stat`, "utf8");
    const ttyNr = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[4]);
    return ttyNr !== 0 && statSync(info.tty).rdev === ttyNr;
  } catch {
    return false;
  }
}

function closed(id: string, why: string): OutliveError {
  return new OutliveError("E_PTY_CLOSED", `The terminal of task ${id} is closed (${why}): the task has ended or its holder is gone`);
}
