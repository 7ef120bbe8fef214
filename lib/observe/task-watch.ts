import type { ChildProcess } from "node:child_process";
import { watch } from "node:fs";
import type { Placement } from "../placement/placement.ts";
import type { TaskRecord } from "../store/record.ts";

export interface TaskWatchOptions {
  record: TaskRecord;
  /** The task's `io/` directory, where the exit marker appears. */
  ioDir: string;
  placement: Placement;
  /** The task's own process, when this supervisor spawned it. */
  child?: ChildProcess;
  livenessIntervalMs: number;
  /** Something may have changed: look at the evidence and decide. Never runs twice at once. */
  check: () => Promise<void>;
  /** The task's deadline has come. */
  onDeadline: () => void;
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

  constructor(private readonly o: TaskWatchOptions) {
    const wake = () => this.wake();
    o.child?.once("exit", wake);
    try {
      const watcher = watch(o.ioDir, { persistent: false }, wake);
      watcher.on("error", () => watcher.close());
      this.abort.signal.addEventListener("abort", () => watcher.close(), { once: true });
    } catch {
      // The liveness interval still notices the end.
    }
    o.placement.watchEmpty(o.record, wake, this.abort.signal);
    const interval = setInterval(wake, o.livenessIntervalMs);
    this.abort.signal.addEventListener("abort", () => clearInterval(interval), { once: true });
    this.armDeadline();
    wake();
  }

  /** One check at a time; a wake during a check runs one more after it. */
  wake(): void {
    if (this.abort.signal.aborted) return;
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
