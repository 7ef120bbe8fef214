import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";

/**
 * PID 1 of the namespace: reaps every process that ends in it, its own or an
 * orphan handed to it, so a pid a test waits to see freed is freed even when
 * the suite's own PID 1 (npm in a container, `unshare` in CI) reaps nothing.
 * perl because it is Essential on Debian and can call wait(2) for any child;
 * Node cannot (libuv waits only for the pids it spawned).
 */
const reaper = '$| = 1; print "ready\\n"; while (1) { select(undef, undef, undef, 0.02) if wait() == -1 }';

/** Why a private pid namespace cannot be had here, or null when it can. */
export function pidNamespaceUnavailable(): string | null {
  if (process.getuid?.() !== 0) return "a private pid namespace and ns_last_pid need root";
  for (const tool of ["unshare", "nsenter", "perl"]) {
    const r = spawnSync(tool, ["--version"], { stdio: "ignore" });
    if (r.error) return `${tool} cannot be run: ${r.error.message}`;
  }
  const r = spawnSync("unshare", ["--pid", "--fork", "--mount-proc", "sh", "-c", "echo 1 > /proc/sys/kernel/ns_last_pid"], { encoding: "utf8" });
  if (r.status !== 0) return `unshare --pid --fork --mount-proc refused: ${r.stderr.trim() || `exit ${r.status}`}`;
  return null;
}

/**
 * A pid namespace of the test's own, with a reaping PID 1 and its own /proc.
 * Processes started in it with {@link PidNamespace.wrap} see only its pids, so
 * a test can give a chosen pid to a stranger ({@link PidNamespace.spawnWithPid})
 * without racing the suite's other forks, and see a dead task's pid freed.
 * Pids given to and taken from its methods are the namespace's own.
 * {@link PidNamespace.close} ends every process in it (the kernel SIGKILLs
 * them all when PID 1 dies).
 */
export class PidNamespace {
  private constructor(
    private readonly unshare: ChildProcess,
    /** PID 1 of the namespace, as this process sees it. */
    readonly initPid: number,
  ) {}

  static async start(): Promise<PidNamespace> {
    // --kill-child: the namespace dies with unshare, if the test dies without close().
    const unshare = spawn("unshare", ["--pid", "--fork", "--mount-proc", "--kill-child", "perl", "-e", reaper], { stdio: ["ignore", "pipe", "ignore"] });
    await new Promise<void>((resolve, reject) => {
      unshare.once("error", reject);
      unshare.once("exit", (code) => reject(new Error(`unshare exited (${code}) before its namespace's PID 1 was ready`)));
      unshare.stdout!.once("data", () => resolve());
    });
    const children = readFileSync(`/proc/${unshare.pid}/task/${unshare.pid}/children`, "utf8").trim();
    const initPid = Number(children.split(/\s+/)[0]);
    if (!Number.isInteger(initPid) || initPid <= 0) throw new Error(`no PID 1 under unshare ${unshare.pid} (children: "${children}")`);
    // Should the test process end without close() (a failed hook, a killed worker), the namespace ends with it.
    const end = () => {
      try {
        process.kill(initPid, "SIGKILL");
      } catch {
        // ended already
      }
    };
    process.once("exit", end);
    unshare.once("exit", () => process.off("exit", end));
    return new PidNamespace(unshare, initPid);
  }

  /** argv prefix that runs a command inside the namespace (pids and /proc). */
  get wrap(): string[] {
    return ["nsenter", "-t", String(this.initPid), "--pid", "--mount", "--"];
  }

  /** Runs argv inside the namespace and returns its stdout; throws on a non-zero exit. */
  run(argv: string[]): string {
    const r = spawnSync(this.wrap[0], [...this.wrap.slice(1), ...argv], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`${argv.join(" ")} in the pid namespace: exit ${r.status}: ${r.stderr.trim()}`);
    return r.stdout;
  }

  /** Signals a process (or with a negative pid, a group) of the namespace. */
  kill(pid: number, signal: NodeJS.Signals): void {
    this.run(["kill", `-${signal.replace(/^SIG/, "")}`, "--", String(pid)]);
  }

  /** /proc/<pid>/stat of a process of the namespace (a zombie's too), or null when the pid is free. */
  stat(pid: number): string | null {
    try {
      return readFileSync(`/proc/${this.initPid}/root/proc/${pid}/stat`, "utf8");
    } catch {
      return null;
    }
  }

  exists(pid: number): boolean {
    return existsSync(`/proc/${this.initPid}/root/proc/${pid}`);
  }

  /**
   * Starts an unrelated `sleep` that gets exactly `pid` in the namespace, by
   * setting its last-allocated pid to pid-1 just before the fork. Waits for
   * the old owner to be reaped first (PID 1 reaps it as soon as it dies). Only
   * the test's own processes fork in the namespace, so a try rarely loses;
   * it tries again (at least `attempts` times, for up to `forMs`) and throws
   * naming the pids it got and the namespace's processes.
   */
  async spawnWithPid(pid: number, attempts = 20, forMs = 10_000): Promise<number> {
    const freeBy = Date.now() + 20_000;
    while (this.exists(pid)) {
      if (Date.now() > freeBy) throw new Error(`pid ${pid} was never freed in the namespace: ${this.stat(pid)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const got: number[] = [];
    const until = Date.now() + forMs;
    for (let i = 0; i < attempts || Date.now() < until; i++) {
      // The sleep outlives sh and is handed to PID 1, which reaps it once it is killed.
      const out = this.run(["sh", "-c", 'echo "$1" > /proc/sys/kernel/ns_last_pid || exit 1; sleep 120 </dev/null >/dev/null 2>&1 & echo $!', "sh", String(pid - 1)]);
      const child = Number(out.trim());
      if (child === pid) return child;
      got.push(child);
      this.kill(child, "SIGKILL");
      await new Promise((r) => setTimeout(r, 20));
    }
    const ps = this.run(["sh", "-c", "for p in /proc/[0-9]*; do echo $p $(cut -d\" \" -f1-5 $p/stat) threads: $(ls $p/task); done"]);
    throw new Error(`could not get pid ${pid} in the namespace in ${got.length} attempts (${forMs} ms); got ${got.slice(-8).join(", ")}; its processes:\n${ps}`);
  }

  /** Ends every process of the namespace and waits (bounded) for unshare to go. */
  async close(): Promise<void> {
    const exited = () => this.unshare.exitCode !== null || this.unshare.signalCode !== null;
    if (exited()) return;
    const gone = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 10_000);
      this.unshare.once("exit", () => (clearTimeout(timer), resolve(true)));
    });
    for (const pid of [this.initPid, this.unshare.pid!]) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    if (!(await gone) && !exited()) {
      console.log(`pid namespace: unshare ${this.unshare.pid} still there 10 s after its PID 1 (${this.initPid}) was killed: ${this.stat(1) ?? "PID 1 gone"}`);
    }
  }
}
