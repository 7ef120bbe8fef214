import type { ChildProcess } from "node:child_process";
import { watch } from "node:fs";
import type { Placement } from "../placement/placement.ts";
import { readProcStat } from "../proc/stat.ts";
import type { TaskRecord } from "../store/record/record.ts";

/** The files in `io/` that only the task's output and its bound change (lib/output): none of them decides an end. */
const OUTPUT_FILES = new Set(["stdout", "stderr", "stdout.dropped", "stderr.dropped", "stdout.dropped.tmp", "stderr.dropped.tmp"]);

export interface TaskWatchOptions {
  record: TaskRecord;
  /** The task's `io/` directory, where the exit marker appears. */
  ioDir: string;
  placement: Placement;
  /** The task's own process, when this supervisor spawned it. */
  child?: ChildProcess;
  livenessIntervalMs: number;
  /**
   * How long a check may be put off while the task's own process is a zombie
   * this process has not reaped yet (default 1000 ms). See `wake`.
   */
  reapWaitMs?: number;
  /**
   * For a task whose evidence was gathered a moment ago (adopted at
   * replay): a cheap look at what could have changed before the watchers
   * were in place, true when a full check must run at once. Without it a
   * full check runs at once. What the look leaves out (an end without an
   * exit code) the placement's emptiness watch or the liveness interval
   * reports, as it would any time later.
   */
  firstLook?: () => boolean;
  /** Something may have changed: look at the evidence and decide. Never runs twice at once. */
  check: () => Promise<void>;
  /** The task's deadline has come. */
  onDeadline: () => void;
  /** The placement's watch saw the task's cgroup empty at `at` (epoch ms), for dating its end. */
  onEmptied?: (at: number) => void;
}

/**
 * Watches one running task until it ends: its exit event (own children), the
 * `io/` directory for the marker, the cgroup's emptying, a deadline timer,
 * and a liveness interval for deaths that leave no marker. Each of them only
 * wakes `check`; the marker and the process table decide, elsewhere.
 */
export class TaskWatch {
  /** Called with the terminal record once the task has ended. */
  readonly waiters: Array<(record: TaskRecord) => void> = [];
  private readonly abort = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private checking: Promise<void> | undefined;
  private recheck = false;
  private reapWaitSince: number | null = null;

  constructor(private readonly o: TaskWatchOptions) {
    const wake = () => this.wake();
    o.child?.once("exit", wake);
    try {
      // The task's output is no evidence of its end: a task that writes a lot (a PTY's every echo, 1 GiB of `dd`)
      // would otherwise have its whole evidence gathered at each write. Its end still wakes the check (the marker,
      // `ended`, `timed-out`), and the liveness interval looks at it as it does at a quiet task.
      const watcher = watch(o.ioDir, { persistent: false }, (_event, name) => {
        if (name === null || !OUTPUT_FILES.has(String(name))) wake();
      });
      watcher.on("error", () => watcher.close());
      this.abort.signal.addEventListener("abort", () => watcher.close(), { once: true });
    } catch {
      // The liveness interval still notices the end.
    }
    o.placement.watchEmpty(o.record, () => {
      o.onEmptied?.(Date.now());
      wake();
    }, this.abort.signal);
    const interval = setInterval(wake, o.livenessIntervalMs);
    this.abort.signal.addEventListener("abort", () => clearInterval(interval), { once: true });
    this.armDeadline();
    if (this.needsFirstCheck()) wake();
  }

  private needsFirstCheck(): boolean {
    try {
      return !this.o.firstLook || this.o.firstLook();
    } catch {
      // Unreadable (out of descriptors, say): the full check runs and reports what it cannot read.
      return true;
    }
  }

  /**
   * One check at a time; a wake during a check runs one more after it. The
   * marker often appears while the wrapper is a zombie not yet reaped: its
   * group then still "exists", and proving it empty means reading all of
   * /proc. The exit event follows within moments and wakes the check again,
   * when a look at the group is one kill(2); so until then (bounded) it waits.
   */
  wake(): void {
    if (this.abort.signal.aborted || this.awaitingReap()) return;
    if (this.checking) {
      this.recheck = true;
      return;
    }
    this.checking = (async () => {
      do {
        this.recheck = false;
        await this.o.check();
      } while (this.recheck && !this.abort.signal.aborted);
    })().finally(() => {
      this.checking = undefined;
    });
  }

  private awaitingReap(): boolean {
    const child = this.o.child;
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return false;
    let state: string | undefined;
    try {
      state = readProcStat(child.pid)?.state;
    } catch {
      // Out of descriptors (EMFILE), say: this runs from timers and watchers, where a throw ends the process.
      // The check that follows reports what it cannot read.
      return false;
    }
    if (state !== "Z") return false;
    this.reapWaitSince ??= Date.now();
    return Date.now() - this.reapWaitSince < (this.o.reapWaitMs ?? 1000);
  }

  /**
   * Resolves once this process has reaped the task's own process (at once
   * when it was not spawned here or is reaped already), or after
   * `timeoutMs`. Until the reap its zombie keeps the group alive to
   * kill(2), and telling whether anything else lives in it means reading
   * all of /proc; after it, one kill(2) answers.
   */
  reaped(timeoutMs: number): Promise<void> {
    const child = this.o.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        child.off("exit", done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      child.once("exit", done);
    });
  }

  /** Resolves once no check is running. */
  async idle(): Promise<void> {
    while (this.checking) await this.checking;
  }

  /** Stops every watcher and timer; the task itself is not touched. */
  stop(): void {
    this.abort.abort();
    if (this.timer) clearTimeout(this.timer);
  }

  private armDeadline(): void {
    const deadline = Date.parse(this.o.record.deadlineAt);
    // setTimeout holds at most ~24.8 days; re-arm until the deadline is near.
    this.timer = setTimeout(() => {
      if (this.abort.signal.aborted) return;
      if (deadline > Date.now() + 5) return this.armDeadline();
      this.o.onDeadline();
    }, Math.max(0, Math.min(deadline - Date.now(), 2 ** 31 - 1)));
  }
}
