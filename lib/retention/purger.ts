import { purgeRemoved } from "./remove-files.ts";

/**
 * Deletes what removals moved aside. Deleting is the slow half of a removal
 * (a few ms a task on a busy disk, against a fraction of one for the rename
 * that already took the task out), so after pruning by the retention rule it
 * runs in the background; close gives it CLOSE_PURGE_BUDGET_MS more, then
 * stops it, and the next open carries on.
 */
export const CLOSE_PURGE_BUDGET_MS = 2000;

export class Purger {
  private running: Promise<void> | null = null;
  private again = false;
  private readonly abort = new AbortController();

  constructor(private readonly root: string, private readonly log: (line: string) => void) {}

  /** Starts deleting in the background (once more after the run under way, if one is). */
  soon(): void {
    if (this.abort.signal.aborted) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.loop().finally(() => (this.running = null));
  }

  /** Deletes everything moved aside, before resolving: for a removal the caller asked for by name. */
  async now(): Promise<void> {
    await purgeRemoved(this.root);
  }

  /**
   * Lets the deleting go on for up to `budgetMs`, then stops it; what is left
   * waits for the next open. Without the budget, a CLI command (which holds
   * the storage for a moment) would stop every purge it started, and what
   * removals moved aside would pile up in `removing/`.
   */
  async stop(budgetMs: number): Promise<void> {
    if (this.running) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([this.running, new Promise((r) => (timer = setTimeout(r, budgetMs)))]);
      clearTimeout(timer);
    }
    this.abort.abort();
    await this.running;
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      await purgeRemoved(this.root, this.abort.signal).catch((error) => this.log(`deleting removed tasks failed: ${(error as Error).message}`));
    } while (this.again && !this.abort.signal.aborted);
  }
}
