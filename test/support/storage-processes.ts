import { existsSync, readFileSync, readlinkSync, watch } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";

/*
 * What runs for a storage, seen from outside as another release (or a
 * person) would see it: a process's program, the storage's spawner by its
 * record and by its own answer, and the commands opening the storage.
 */

/** The argv of `pid` (its /proc cmdline), [] once it is gone. */
export function argvOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  } catch {
    return [];
  }
}

/** The program `pid` runs (its /proc exe) and the argv it was given; `exe` null once it is gone. */
export function programOf(pid: number): { exe: string | null; argv: string[] } {
  let exe: string | null = null;
  try {
    exe = readlinkSync(`/proc/${pid}/exe`);
  } catch {
    // Gone (or not ours to read): the argv says the same.
  }
  return { exe, argv: argvOf(pid) };
}

/** True while `pid` runs (a zombie does not). */
export function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /s.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

export interface RunningSpawner {
  pid: number;
  /** The socket its record names. */
  socket: string;
  argv: string[];
}

/** The spawner of the storage at `storage`, as its record (`spawner/spawner.json`) names it, while that process runs. */
export function spawnerOf(storage: string): RunningSpawner | null {
  try {
    const r = JSON.parse(readFileSync(join(storage, "spawner", "spawner.json"), "utf8"));
    return alive(r.pid) ? { pid: r.pid, socket: r.socket, argv: argvOf(r.pid) } : null;
  } catch {
    return null;
  }
}

/** What a spawner answers to `hello` (`{ pid, startTime, version, protocol? }`), asked as a supervisor's client asks it. */
export function spawnerHello(socket: string): Promise<{ pid: number; startTime: string; version: string; protocol?: number }> {
  return new Promise((resolve, reject) => {
    const c = connect(socket);
    let got = "";
    const timer = setTimeout(() => {
      c.destroy();
      reject(new Error(`no answer to hello on ${socket}`));
    }, 10_000);
    c.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    c.on("connect", () => c.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "hello" })}\n`));
    c.on("data", (d) => {
      got += d;
      if (!got.includes("\n")) return;
      clearTimeout(timer);
      c.destroy();
      resolve(JSON.parse(got.split("\n")[0]).result);
    });
  });
}

/**
 * Counts, from now on, the times a command gave the storage at `storage` up
 * (its lock, `supervisor.lock`, removed): a `wait` with no holder opens the
 * storage, looks, and gives it up, every interval.
 */
export function countStorageOpens(storage: string): { count: () => number; close: () => void } {
  const lock = join(storage, "supervisor.lock");
  let n = 0;
  const watcher = watch(storage, (_event, name) => {
    if (name === "supervisor.lock" && !existsSync(lock)) n++;
  });
  return { count: () => n, close: () => watcher.close() };
}
