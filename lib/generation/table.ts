import { isCurrentGeneration } from "./check.ts";
import { GenerationEntry, KeyRecord } from "./entry.ts";
import { GenerationError } from "./errors.ts";
import type { GenerationEvents, GenerationRef } from "./events.ts";
import type { KillSignal, OutputStream, ProcessHandle, ProcessSink, ProcessSource } from "./handle.ts";
import { ListenerSet } from "./listeners.ts";

/**
 * Options of `GenerationTable`, each with its default.
 *
 * @example
 * ```ts
 * import { GenerationTable, childProcessSource, type GenerationTableOptions } from "./mod.ts";
 * // Predecessors that must not linger: kill them outright.
 * const options: GenerationTableOptions = { supersedeSignal: "SIGKILL" };
 * const table = new GenerationTable(childProcessSource(), options);
 * console.log(table.live().length); // 0
 * ```
 */
export interface GenerationTableOptions {
  /**
   * Signal sent to a predecessor when a spawn supersedes it. Default
   * `"SIGTERM"`: the predecessor may clean up at leisure, because nothing it
   * does after the bump is delivered as the key's.
   */
  supersedeSignal?: KillSignal;
  /**
   * The highest generation ever issued before this table existed (e.g. the
   * largest `generation` among stored task records). Default 0. The counter
   * continues after it, so a restarted supervisor never reuses a number.
   */
  lastGeneration?: number;
}

/**
 * One live (not yet settled) generation, as `current`, `live` and `killAll` report it.
 *
 * @example
 * ```ts
 * import { GenerationTable, childProcessSource, type GenerationInfo } from "./mod.ts";
 * const table = new GenerationTable(childProcessSource());
 * table.spawn("k", { command: "sleep", args: ["5"] });
 * table.spawn("k", { command: "sleep", args: ["5"] });
 * const live: GenerationInfo[] = table.live();
 * console.log(live.map((g) => [g.generation, g.current])); // [[1, false], [2, true]] until 1 has gone
 * table.killAll();
 * ```
 */
export interface GenerationInfo extends GenerationRef {
  readonly pid: number | null;
  /** Whether it owns its key; false for a superseded predecessor still draining. */
  readonly current: boolean;
  readonly supersededBy: number | null;
}

/**
 * What `spawn` started, and what it took the key from.
 *
 * @example
 * ```ts
 * import { GenerationTable, childProcessSource, type SpawnResult } from "./mod.ts";
 * const table = new GenerationTable(childProcessSource());
 * table.spawn("k", { command: "sleep", args: ["5"] });
 * const r: SpawnResult = table.spawn("k", { command: "true" });
 * console.log(r.generation, r.superseded?.generation); // 2 1
 * ```
 */
export interface SpawnResult extends GenerationRef {
  readonly pid: number | null;
  /** The generation this spawn took the key from, or null when the key was free. */
  readonly superseded: { readonly generation: number; readonly pid: number | null; readonly delivered: boolean } | null;
}

/**
 * The outcome of `kill`: which generation was signalled, or why none was.
 *
 * @example
 * ```ts
 * import { GenerationTable, childProcessSource, type GenerationKillResult } from "./mod.ts";
 * const table = new GenerationTable(childProcessSource());
 * const r: GenerationKillResult = table.kill("nobody");
 * console.log(r.ok ? r.generation : r.error.code); // "NO_CURRENT"
 * ```
 */
/**
 * The outcome of `adopt`: the sink to feed the adopted process's events into, or why it was refused.
 *
 * @example
 * ```ts
 * import { GenerationTable, childProcessSource, type AdoptResult } from "./mod.ts";
 * const table = new GenerationTable(childProcessSource());
 * const r: AdoptResult = table.adopt("k", 7, { pid: null, kill: () => false });
 * console.log(r.ok); // true
 * ```
 */
export type AdoptResult =
  | { readonly ok: true; readonly key: string; readonly generation: number; readonly sink: ProcessSink }
  | { readonly ok: false; readonly error: GenerationError };

export type GenerationKillResult =
  | { readonly ok: true; readonly key: string; readonly generation: number; readonly pid: number | null; readonly delivered: boolean }
  | { readonly ok: false; readonly error: GenerationError };

/**
 * A keyed process table: one process per key, replaced by spawning again
 * under the same key. Identity is (key, generation); a generation is current
 * only while it owns its key, and only the current generation's `output`,
 * `error` and `exit` are delivered.
 *
 * @example
 * ```ts
 * import { GenerationTable, childProcessSource } from "./mod.ts";
 * const table = new GenerationTable(childProcessSource());
 * table.on("output", (e) => console.log(e.key, e.generation, String(e.data)));
 * table.on("exit", (e) => console.log(e.key, e.generation, "exited", e.code));
 * table.spawn("tab-1", { command: "sh", args: ["-c", "echo first; sleep 5"] });
 * table.spawn("tab-1", { command: "sh", args: ["-c", "echo second"] }); // kills the first
 * // prints "tab-1 2 second" and "tab-1 2 exited 0"; nothing of generation 1
 * ```
 */
export class GenerationTable<Spec> {
  readonly #source: ProcessSource<Spec>;
  readonly #supersedeSignal: KillSignal;
  readonly #records = new Map<string, KeyRecord>();
  readonly #listeners = new ListenerSet<GenerationEvents>();
  // One counter for the whole table, so a generation number is never reused
  // even after a key's record has been dropped and created again.
  #counter = 0;

  constructor(source: ProcessSource<Spec>, options: GenerationTableOptions = {}) {
    this.#source = source;
    this.#supersedeSignal = checkSignal("supersedeSignal", options.supersedeSignal ?? "SIGTERM");
    const last = options.lastGeneration ?? 0;
    if (!Number.isSafeInteger(last) || last < 0) {
      throw new GenerationError("INVALID_OPTION", `Expected the \`lastGeneration\` option to be a non-negative integer, got \`${String(last)}\` (${typeof last})`);
    }
    this.#counter = last;
  }

  /** Subscribes to an event; returns the function that unsubscribes. */
  on<K extends keyof GenerationEvents>(name: K, listener: (event: GenerationEvents[K]) => void): () => void {
    return this.#listeners.on(name, listener);
  }

  /** Whether `generation` owns `key` now. Call it after every `await` in a handler, before any side effect. */
  isCurrent(key: string, generation: number): boolean {
    return isCurrentGeneration(this.#records, key, generation);
  }

  /**
   * Starts a new generation under `key`. If another generation owns the key,
   * it is superseded: the counter is bumped and ownership moves BEFORE the
   * predecessor is signalled, so whatever the predecessor does from then on
   * (even synchronously, inside `kill`) is stale.
   */
  spawn(key: string, spec: Spec): SpawnResult {
    checkKey(key);
    const generation = ++this.#counter;
    let record = this.#records.get(key);
    if (record === undefined) {
      record = new KeyRecord();
      this.#records.set(key, record);
    }
    const previous = record.current === null ? null : record.live.get(record.current) ?? null;
    const entry = new GenerationEntry(key, generation);
    record.live.set(generation, entry);
    record.current = generation;

    let superseded: SpawnResult["superseded"] = null;
    if (previous !== null) {
      previous.supersededBy = generation;
      const delivered = this.#signal(previous, this.#supersedeSignal);
      superseded = { generation: previous.generation, pid: previous.pid, delivered };
    }

    const sink = this.#sinkFor(entry);
    try {
      entry.handle = this.#source.start(spec, sink);
      entry.pid = entry.handle.pid;
    } catch (cause) {
      // Report it the way a failed spawn is reported, asynchronously, so the
      // caller always gets its SpawnResult before any event of the generation.
      const error = new GenerationError("START_FAILED", `starting generation ${generation} of key ${JSON.stringify(key)} failed: ${describe(cause)}`, { cause });
      queueMicrotask(() => sink.error(error));
    }
    if (entry.pendingKill !== null && entry.handle !== null && !entry.settled) {
      // A listener superseded this generation while it was being started.
      this.#signal(entry, entry.pendingKill);
    }

    // Emitted last: a listener that throws or spawns again finds the table
    // consistent, and the successor already running.
    if (previous !== null && superseded !== null) {
      this.#listeners.emit("superseded", {
        key,
        generation: previous.generation,
        pid: previous.pid,
        by: generation,
        killSignal: this.#supersedeSignal,
        delivered: superseded.delivered,
      });
    }
    return { key, generation, pid: entry.pid, superseded };
  }

  /**
   * Tracks a process this table did not start: a keyed task found alive on
   * replay after a supervisor restart. Adopt in ascending generation order;
   * each generation must be above every one this table has issued or
   * adopted (else `GENERATION_TAKEN`). The adopted generation owns the key;
   * an earlier one under the key becomes a superseded predecessor WITHOUT
   * being signalled (whether to kill it is replay's decision). Feed the
   * process's events into the returned sink until it settles.
   */
  adopt(key: string, generation: number, handle: ProcessHandle): AdoptResult {
    checkKey(key);
    if (!Number.isSafeInteger(generation) || generation <= this.#counter) {
      return {
        ok: false,
        error: new GenerationError("GENERATION_TAKEN", `cannot adopt generation ${generation} of key ${JSON.stringify(key)}: it must be an integer above ${this.#counter}, the highest issued or adopted so far`),
      };
    }
    this.#counter = generation;
    let record = this.#records.get(key);
    if (record === undefined) {
      record = new KeyRecord();
      this.#records.set(key, record);
    }
    const previous = record.current === null ? undefined : record.live.get(record.current);
    if (previous !== undefined) previous.supersededBy = generation;
    const entry = new GenerationEntry(key, generation);
    entry.handle = handle;
    entry.pid = handle.pid;
    record.live.set(generation, entry);
    record.current = generation;
    return { ok: true, key, generation, sink: this.#sinkFor(entry) };
  }

  /**
   * Raises the counter to at least `generation` (never lowers it): after
   * adopting the live generations found on replay, reserve every number a
   * stored record ever used, so none is issued twice.
   */
  reserveThrough(generation: number): void {
    if (Number.isSafeInteger(generation) && generation > this.#counter) this.#counter = generation;
  }

  /** Signals the generation that owns `key` (default SIGTERM). It stays current until it settles. */
  kill(key: string, signal: KillSignal = "SIGTERM"): GenerationKillResult {
    const record = this.#records.get(key);
    const entry = record?.current == null ? undefined : record.live.get(record.current);
    if (entry === undefined) {
      return { ok: false, error: new GenerationError("NO_CURRENT", `no live generation owns key ${JSON.stringify(key)}`) };
    }
    const delivered = this.#signal(entry, signal);
    return { ok: true, key, generation: entry.generation, pid: entry.pid, delivered };
  }

  /** The generation that owns `key`, or null when the key is free. */
  current(key: string): GenerationInfo | null {
    const record = this.#records.get(key);
    const entry = record?.current == null ? undefined : record.live.get(record.current);
    return entry === undefined ? null : info(entry, true);
  }

  /** Every generation not yet settled, superseded predecessors included: nothing live is ever untracked. */
  live(): GenerationInfo[] {
    const all: GenerationInfo[] = [];
    for (const record of this.#records.values()) {
      for (const entry of record.live.values()) all.push(info(entry, record.current === entry.generation));
    }
    return all;
  }

  /** Signals every live generation, draining predecessors included (default SIGKILL): for shutdown. */
  killAll(signal: KillSignal = "SIGKILL"): GenerationInfo[] {
    const all = this.live();
    for (const record of [...this.#records.values()]) {
      for (const entry of [...record.live.values()]) this.#signal(entry, signal);
    }
    return all;
  }

  #signal(entry: GenerationEntry, signal: KillSignal): boolean {
    entry.killSignal = signal;
    if (entry.handle === null) {
      entry.pendingKill = signal;
      return false;
    }
    try {
      return entry.handle.kill(signal);
    } catch (cause) {
      this.#fault(entry, new GenerationError("PROCESS_FAULT", `signalling generation ${entry.generation} of key ${JSON.stringify(entry.key)} with ${signal} failed: ${describe(cause)}`, { cause }));
      return false;
    }
  }

  #sinkFor(entry: GenerationEntry): ProcessSink {
    return {
      output: (stream, data) => this.#output(entry, stream, data),
      exit: (code, signal) => this.#settle(entry, code, signal, null),
      close: (code, signal) => this.#settle(entry, code, signal, null),
      error: (cause) => this.#settle(entry, null, null, asGenerationError(cause, "SPAWN_FAILED", entry)),
      fault: (cause) => this.#fault(entry, asGenerationError(cause, "PROCESS_FAULT", entry)),
    };
  }

  #output(entry: GenerationEntry, stream: OutputStream, data: string | Uint8Array): void {
    const listeners = this.#listeners.snapshot("output");
    if (listeners.length === 0) return;
    const { key, generation } = entry;
    const event = { key, generation, pid: entry.pid, stream, data };
    for (let i = 0; i < listeners.length; i++) {
      // Checked before every listener: the one before may have spawned again.
      if (!isCurrentGeneration(this.#records, key, generation)) return;
      listeners[i](event);
    }
  }

  #fault(entry: GenerationEntry, error: GenerationError): void {
    const listeners = this.#listeners.snapshot("error");
    const { key, generation } = entry;
    const event = { key, generation, pid: entry.pid, error };
    for (let i = 0; i < listeners.length; i++) {
      if (!isCurrentGeneration(this.#records, key, generation)) return;
      listeners[i](event);
    }
  }

  /** Settles a generation exactly once, whichever of exit / close / error comes first. */
  #settle(entry: GenerationEntry, code: number | null, signal: string | null, error: GenerationError | null): void {
    if (entry.settled) return;
    entry.settled = true;
    const { key, generation } = entry;
    const wasCurrent = isCurrentGeneration(this.#records, key, generation);
    const record = this.#records.get(key);
    if (record !== undefined) {
      record.live.delete(generation);
      // Compare-and-delete: only the owner frees the key, and it does so
      // before `exit` is emitted, so a listener can spawn under it at once.
      if (record.current === generation) record.current = null;
      if (record.live.size === 0) this.#records.delete(key);
    }
    if (wasCurrent) {
      this.#listeners.emit("exit", { key, generation, pid: entry.pid, code, signal, error, killSignal: entry.killSignal });
    } else {
      this.#listeners.emit("retired", { key, generation, pid: entry.pid, by: entry.supersededBy ?? generation, code, signal, error });
    }
  }
}

function info(entry: GenerationEntry, current: boolean): GenerationInfo {
  return { key: entry.key, generation: entry.generation, pid: entry.pid, current, supersededBy: entry.supersededBy };
}

function checkKey(key: unknown): asserts key is string {
  if (typeof key !== "string" || key.length === 0) {
    throw new GenerationError("INVALID_KEY", `Expected the key to be a non-empty string, got ${JSON.stringify(key)} (${typeof key})`);
  }
}

function checkSignal(option: string, value: unknown): KillSignal {
  const ok = (typeof value === "string" && value.length > 0) || (typeof value === "number" && Number.isInteger(value) && value >= 0);
  if (!ok) {
    throw new GenerationError("INVALID_OPTION", `Expected the \`${option}\` option to be a signal name or a non-negative integer, got \`${String(value)}\` (${typeof value})`);
  }
  return value as KillSignal;
}

function asGenerationError(cause: unknown, code: "SPAWN_FAILED" | "PROCESS_FAULT", entry: GenerationEntry): GenerationError {
  if (cause instanceof GenerationError) return cause;
  const what = code === "SPAWN_FAILED" ? "failed" : "reported a fault";
  return new GenerationError(code, `generation ${entry.generation} of key ${JSON.stringify(entry.key)} ${what}: ${describe(cause)}`, { cause });
}

function describe(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}
