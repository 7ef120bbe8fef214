import { purgeRemoved } from "./remove-files.ts";

/**
 * Deletes what removals moved aside. Deleting is the slow half of a removal
 * (a few ms a task on a busy disk, against a fraction of one for the rename
 * that already took the task out), so after pruning by the retention rule it
 * runs in the background; close stops it, and the next open carries on.
 */
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

  /** Stops deleting; what is left waits for the next open. */
  async stop(): Promise<void> {
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
