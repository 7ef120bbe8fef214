import { watch } from "node:fs";
import { streamFiles } from "../output/dropped.ts";
import { readChunks } from "../output/read-chunk.ts";
import type { OutputStream } from "../output/request.ts";
import type { ListeningPort } from "../ports/proc-net.ts";
import type { TaskPaths } from "../store/layout.ts";
import type { TaskRecord } from "../store/record/record.ts";
import { probeInterval, readyMoment, type ReadySightings } from "./decide-ready.ts";
import { httpAnswers } from "./http-probe.ts";
import { LineMatcher } from "./line-matcher.ts";
import type { ReadyAtSource, ReadySpec } from "./ready-spec.ts";

/** The most output one look reads of a stream; the next look reads on. */
const LOOK_BYTES = 1 << 20;
/** How long an HTTP probe may take. */
const HTTP_PROBE_MS = 1000;
/** A task whose only condition is a line of output is also looked at this often, in case a write went unheard. */
const LOG_FALLBACK_MS = 1000;

export interface ReadyWatchOptions {
  record: TaskRecord;
  paths: TaskPaths;
  /** True for a task adopted at replay: what its first look finds may have held since some time while no supervisor ran. */
  afterReplay: boolean;
  /** The task's listening sockets now (lib/ports). */
  ports(record: TaskRecord): ListeningPort[];
  /** Every condition held: the moment and its source. Called once. */
  ready(at: number, source: ReadyAtSource): Promise<void>;
}

/**
 * Watches one task until it is ready: its output for the `log` pattern
 * (woken by the `io/` directory's changes), its ports and its URL (probed
 * often at first, less and less after: probeInterval). Each look only
 * gathers sightings; readyMoment decides.
 */
export class ReadyWatch {
  private readonly spec: ReadySpec;
  private readonly seen: ReadySightings = {};
  private readonly matcher: LineMatcher | null;
  private readonly offsets: Record<OutputStream, number> = { stdout: 0, stderr: 0 };
  private readonly began = Date.now();
  private readonly abort = new AbortController();
  private first = true;
  private looking: Promise<void> | null = null;
  private again = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly o: ReadyWatchOptions) {
    this.spec = o.record.ready!;
    this.matcher = this.spec.log === null ? null : new LineMatcher(new RegExp(this.spec.log));
    if (this.matcher) {
      try {
        const watcher = watch(o.paths.io, { persistent: false }, () => this.wake());
        watcher.on("error", () => watcher.close());
        this.abort.signal.addEventListener("abort", () => watcher.close(), { once: true });
      } catch {
        // The fallback look still reads the output.
      }
    }
    this.wake();
  }

  /** Resolves once no look is under way. */
  async idle(): Promise<void> {
    while (this.looking) await this.looking;
  }

  stop(): void {
    this.abort.abort();
    clearTimeout(this.timer);
  }

  private wake(): void {
    if (this.abort.signal.aborted) return;
    if (this.looking) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.looking = (async () => {
      do {
        this.again = false;
        await this.look();
      } while (this.again && !this.abort.signal.aborted);
    })().finally(() => {
      this.looking = null;
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.abort.signal.aborted) return;
    const probing = (this.spec.port !== null && !this.seen.port) || (this.spec.http !== null && !this.seen.http);
    const delay = probing ? probeInterval(Date.now() - this.began) : LOG_FALLBACK_MS;
    this.timer = setTimeout(() => this.wake(), delay);
  }

  private async look(): Promise<void> {
    const afterReplay = this.first && this.o.afterReplay;
    this.first = false;
    const { spec, seen } = this;
    if (this.matcher && !seen.log && this.scanOutput()) seen.log = { at: Date.now(), afterReplay };
    if (spec.port !== null && !seen.port) {
      const listening = this.o.ports(this.o.record).some((p) => p.proto === "tcp" && p.port === spec.port);
      if (listening) seen.port = { at: Date.now(), afterReplay };
    }
    if (spec.http !== null && !seen.http && (await httpAnswers(spec.http, HTTP_PROBE_MS, this.abort.signal))) {
      seen.http = { at: Date.now(), afterReplay };
    }
    if (this.abort.signal.aborted) return;
    const moment = readyMoment(spec, seen);
    if (!moment) return;
    this.stop();
    await this.o.ready(moment.at, moment.source);
  }

  /** Reads what both streams gained since the last look; true once a line matched. */
  private scanOutput(): boolean {
    for (const stream of ["stdout", "stderr"] as const) {
      const files = streamFiles(this.o.paths, stream);
      for (;;) {
        const chunks = readChunks(stream, files, this.offsets[stream], LOOK_BYTES);
        if (chunks.length === 0) break;
        for (const c of chunks) {
          if (c.missed > 0) this.matcher!.skip(stream);
          if (c.data.byteLength > 0 && this.matcher!.feed(stream, c.data)) return true;
          this.offsets[stream] = c.offset + c.missed + c.data.byteLength;
        }
        if (chunks.every((c) => c.data.byteLength < LOOK_BYTES)) break;
      }
    }
    return false;
  }
}
