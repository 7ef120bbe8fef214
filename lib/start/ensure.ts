import { isTerminal, type TaskRecord } from "../store/record/record.ts";
import type { CheckedRunSpec } from "./run-spec.ts";
import { specDifferences } from "./spec-digest.ts";

/** What an ensured `run` did under its key. */
export interface EnsureOutcome {
  /** `kept`: the live task had the same spec and is the answer; `replaced`: it had another and was superseded; `started`: there was none. */
  outcome: "kept" | "replaced" | "started";
  /** The task superseded (`replaced`), else null. */
  replaced: string | null;
  /** With `replaced`: which parts of the spec differed (command, cwd, limits, pty, readiness, restart, env). */
  differs: string[];
}

/** A task as `run` answers it: with `ensured` when the spec asked for `ensure`. */
export type RunResult = TaskRecord & { ensured?: EnsureOutcome };

export interface EnsurerOptions {
  /** The live task that owns `key` now (its newest generation), or null. */
  current(key: string): TaskRecord | null;
  /** Resolves once the starts under `key` under way here are over, one way or the other; null when none is. */
  startingUnder(key: string): Promise<unknown> | null;
  start(spec: CheckedRunSpec): Promise<TaskRecord>;
}

/** How long a keyed task `starting` with no start under way here (adopted so) is looked at again. */
const STARTING_POLL_MS = 20;
const STARTING_WAIT_MS = 30_000;

/**
 * `ensure`: under a key, a start whose checked spec (its digest) is the
 * same as the live task's returns that task, marked kept; a different one
 * replaces it, as a keyed run does, and says what differed. A keyed task
 * still `starting` is waited for, then compared; one `killing` or ended is
 * replaced; one waiting out a restart delay is `running`, so live. Ensures
 * under one key are taken one at a time, so two agents retrying at once get
 * one task.
 */
export class Ensurer {
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(private readonly o: EnsurerOptions) {}

  ensure(spec: CheckedRunSpec & { key: string }): Promise<RunResult> {
    const before = this.chains.get(spec.key) ?? Promise.resolve();
    const mine = before.catch(() => {}).then(() => this.ensureNow(spec));
    const tail = mine.catch(() => {});
    this.chains.set(spec.key, tail);
    void tail.then(() => {
      if (this.chains.get(spec.key) === tail) this.chains.delete(spec.key);
    });
    return mine;
  }

  private async ensureNow(spec: CheckedRunSpec & { key: string }): Promise<RunResult> {
    // A start under the key still under way here (its record may not even be made yet) is waited for, then compared.
    for (let under = this.o.startingUnder(spec.key); under; under = this.o.startingUnder(spec.key)) await under.catch(() => {});
    let live = this.o.current(spec.key);
    // One left `starting` by another incarnation, with no start here to wait on, is looked at until it settles.
    for (const until = Date.now() + STARTING_WAIT_MS; live?.state === "starting" && Date.now() < until;) {
      await new Promise((r) => setTimeout(r, STARTING_POLL_MS));
      live = this.o.current(spec.key);
    }
    if (live?.state === "running" && live.specDigest === spec.specDigest) {
      return { ...live, ensured: { outcome: "kept", replaced: null, differs: [] } };
    }
    // Superseded by the start below, as a keyed run supersedes: a live one of another spec, or one being killed already.
    const replaced = live && !isTerminal(live.state) ? live : null;
    const started = await this.o.start(spec);
    const differs = replaced ? specDifferences(replaced, spec) : [];
    return { ...started, ensured: { outcome: replaced ? "replaced" : "started", replaced: replaced?.id ?? null, differs } };
  }
}
