import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { EXIT_MARKER_PLACEHOLDER, type ExitMarker, readExitMarkerNow } from "../../lib/observe/exit-marker.ts";
import { findShim } from "../../lib/spawn/shim-path.ts";
import { encodeShimSettings, type ShimSettings } from "../../lib/spawn/shim-settings.ts";
import { waitFor } from "./wait.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * The shim these tests run: the one OUTLIVE_SHIM names (another build, e.g.
 * by Debian's rustc 1.63, or a packaged one), else the build beside the
 * sources, built (or brought up to date) first by the build script, as `npm
 * run build` does; cargo makes that a no-op when nothing changed. `path` is
 * null, with the reason, where it cannot be had.
 */
export function shimUnderTest(): { path: string; reason?: undefined } | { path: null; reason: string } {
  if (process.env.OUTLIVE_SHIM) {
    const named = findShim({ env: process.env });
    return named.path === null ? { path: null, reason: named.reason } : { path: named.path };
  }
  let said = "";
  try {
    said = execFileSync(process.execPath, [join(ROOT, "dist/scripts/build-shim.js")], { cwd: ROOT, encoding: "utf8", timeout: 600_000 }).trim();
  } catch (error) {
    return { path: null, reason: `the build failed: ${(error as Error).message}` };
  }
  const found = findShim({ env: {} });
  if (found.path === null) return { path: null, reason: said || found.reason };
  return { path: found.path };
}

/** One run of the shim in a task directory of its own, as the library starts it. */
export interface ShimRun {
  id: string;
  dir: string;
  io: string;
  /** The shim's pid: the task's process group. */
  pid: number;
  child: ChildProcess;
  /** When spawn() was called (ms since the epoch). */
  startedAt: number;
  /** The shim's own end: its exit code, or the signal that ended it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  marker(): ExitMarker;
  /** The raw bytes of `io/exit`. */
  exitBytes(): string;
  /** The text of `io/NAME` (or of `NAME` when it has a slash), "" when absent. */
  read(name: string): string;
  has(name: string): boolean;
}

export interface ShimStart {
  /** The settings, or how to make them from the run's task directory; `id` and `io` are filled in. */
  settings?: TestSettings | ((dir: string) => TestSettings);
  /** Bytes to write instead of encoded settings (made from the run's io directory, id and task directory). */
  raw?: Buffer | ((io: string, id: string, dir: string) => Buffer);
  /** The shim's arguments; `[id]` when left out. */
  args?: string[];
  argv0?: string;
  env?: NodeJS.ProcessEnv;
  /** Write nothing and leave stdin open. */
  holdStdin?: boolean;
  id?: string;
  /** Where the task directory is made; the system's temp directory when left out. */
  base?: string;
}

type TestSettings = Partial<ShimSettings> & Pick<ShimSettings, "command">;

const runs: ShimRun[] = [];
let serial = 0;

/** The settings a task gets unless a test says otherwise. */
export function defaults(io: string, id: string): Omit<ShimSettings, "command"> {
  return { id, io, deadlineMs: 0, graceMs: 2000, maxOutput: 0, watch: "inotify", commandPid: true };
}

/**
 * Starts the shim as spawnTask does: a new session (`detached`), fd 0 a
 * pipe with the settings (written, then ended), fd 1 and 2 the output
 * files (append), fd 3 `io/exit` made create-exclusive with its 4-byte
 * placeholder; `io/timed-out.reserved` made beside them.
 */
export function startShim(shim: string, o: ShimStart): ShimRun {
  const dir = mkdtempSync(join(o.base ?? tmpdir(), "outlive-shim-"));
  try {
    return startIn(shim, o, dir);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

function startIn(shim: string, o: ShimStart, dir: string): ShimRun {
  const id = o.id ?? `t-${process.pid}-${++serial}`;
  const io = join(dir, "io");
  mkdirSync(io);
  // Made before anything starts: settings that cannot be encoded leave no shim waiting on its stdin.
  const settings = typeof o.settings === "function" ? o.settings(dir) : o.settings;
  const raw = typeof o.raw === "function" ? o.raw(io, id, dir) : o.raw;
  const input = o.holdStdin ? null : raw ?? encodeShimSettings({ ...defaults(io, id), ...settings!, id: settings?.id ?? id, io: settings?.io ?? io });
  const exitPath = join(io, "exit");
  const exitFd = openSync(exitPath, "wx", 0o600);
  writeFileSync(exitPath, EXIT_MARKER_PLACEHOLDER, { flag: "r+" });
  const out = openSync(join(io, "stdout"), "a", 0o600);
  const err = openSync(join(io, "stderr"), "a", 0o600);
  writeFileSync(join(io, "timed-out.reserved"), "");
  const startedAt = Date.now();
  let child: ChildProcess;
  try {
    child = spawn(shim, o.args ?? [id], {
      detached: true,
      stdio: ["pipe", out, err, exitFd],
      env: o.env ?? process.env,
      ...(o.argv0 ? { argv0: o.argv0 } : {}),
    });
  } finally {
    for (const fd of [exitFd, out, err]) closeSync(fd);
  }
  // A shim that refused its settings early closes its end: the rest of a long write is not wanted.
  child.stdin!.on("error", () => {});
  if (input) child.stdin!.end(input);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal, at: Date.now() })));
  const file = (name: string) => (name.includes("/") ? name : join(io, name));
  const run: ShimRun = {
    id,
    dir,
    io,
    pid: child.pid!,
    child,
    startedAt,
    exited,
    marker: () => readExitMarkerNow(exitPath),
    exitBytes: () => readFileSync(exitPath, "latin1"),
    read: (name) => (existsSync(file(name)) ? readFileSync(file(name), "utf8") : ""),
    has: (name) => existsSync(file(name)),
  };
  runs.push(run);
  return run;
}

/** Waits for the exit code in `io/exit` and returns it. */
export async function codeOf(run: ShimRun, timeoutMs = 30_000): Promise<number> {
  await waitFor(`the exit marker of ${run.id}`, () => run.marker().kind === "code", timeoutMs);
  const m = run.marker();
  return m.kind === "code" ? m.code : -1;
}

/** Waits until `io/NAME` holds `text`. */
export async function waitForText(run: ShimRun, name: string, text: string, timeoutMs = 30_000): Promise<void> {
  await waitFor(`${JSON.stringify(text)} in ${name} of ${run.id} (has ${JSON.stringify(run.read(name).slice(-300))})`, () => run.read(name).includes(text), timeoutMs);
}

/**
 * Waits until the command (io/command-pid) has a child that runs `comm`:
 * a `sleep 120 &` that has exec'd. Until then the child is a fork of bash
 * with bash's own handlers, which runs the EXIT trap a second time if a
 * TERM lands there (seen: the trap's line twice in a test's output).
 */
export async function waitForChild(run: ShimRun, comm: string, timeoutMs = 30_000): Promise<void> {
  await waitFor(`a ${comm} started by the command of ${run.id}`, () => {
    const pid = run.read("command-pid").trim();
    if (!pid) return false;
    try {
      const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(" ").filter(Boolean);
      return kids.some((k) => readFileSync(`/proc/${k}/comm`, "utf8").trim() === comm);
    } catch {
      return false;
    }
  }, timeoutMs);
}

/** Fields of /proc/PID/stat after the command name (index 0 is the state), or null when the process is gone. */
export function procStat(pid: number): string[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).trim().split(" ");
  } catch {
    return null;
  }
}

/** True while `pid` exists and is not a zombie. */
export function running(pid: number): boolean {
  const s = procStat(pid);
  return s !== null && s[0] !== "Z" && s[0] !== "X";
}

/** The terminal's `PID TTY` of a PTY task, or null. */
export function ptyInfo(run: ShimRun): { pid: number; tty: string } | null {
  const m = /^(\d+) (\/dev\/pts\/\d+)\n$/.exec(run.read(join(run.dir, "pty", "info")));
  return m ? { pid: Number(m[1]), tty: m[2] } : null;
}

/** Ends what the runs left (each task's group, a PTY task's session) and removes their directories. */
export async function cleanupShims(): Promise<void> {
  for (const run of runs.splice(0)) {
    const pty = ptyInfo(run);
    for (const pgid of [run.pid, pty?.pid]) {
      if (!pgid) continue;
      try {
        process.kill(-pgid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    await Promise.race([run.exited, new Promise((r) => setTimeout(r, 5000))]);
    rmSync(run.dir, { recursive: true, force: true });
  }
}

/** The files in `io/` now, sorted. */
export function ioFiles(run: ShimRun): string[] {
  return readdirSync(run.io).sort();
}

/** Bytes the file system has allocated for `path` (st_blocks, in 512-byte units). */
export function allocated(path: string): number {
  return statSync(path).blocks * 512;
}
