import { describeValue, OutliveError } from "../errors.ts";

/** A task's output streams. */
export type OutputStream = "stdout" | "stderr";
export const OUTPUT_STREAMS: readonly OutputStream[] = ["stdout", "stderr"];

/**
 * One piece of a task's output. `offset` is absolute for the life of the
 * task (byte 0 is the first byte it ever wrote to that stream). A chunk
 * with `missed > 0` holds no data: those bytes, from `offset` on, were
 * dropped by the output bound before this follower read them. The next
 * chunk of the stream starts at `offset + missed + data.byteLength`, which
 * is the `from` to resume at.
 */
export interface OutputChunk {
  stream: OutputStream;
  offset: number;
  data: Uint8Array;
  missed: number;
}

/** What `output()` takes. */
export interface OutputOptions {
  /** `stdout` (default), `stderr`, or `both` (chunks of each, as they come). */
  stream?: OutputStream | "both";
  /**
   * Byte offset to start at (default 0): a number, applied to each stream
   * followed, or `{ stdout, stderr }` to resume both.
   */
  from?: number | Partial<Record<OutputStream, number>>;
}

/** The normalised request: which streams, each with its start. */
export type OutputRequest = Array<{ stream: OutputStream; from: number }>;

/**
 * Checks `output()`'s options once, naming the option and the value on a problem. Pure.
 *
 * @example
 * ```ts
 * import { checkOutputOptions } from "./request.ts";
 * console.log(checkOutputOptions({ stream: "both", from: { stderr: 10 } }));
 * // [{ stream: "stdout", from: 0 }, { stream: "stderr", from: 10 }]
 * ```
 */
export function checkOutputOptions(o: OutputOptions = {}): OutputRequest {
  const bad = (name: string, expected: string, value: unknown) =>
    new OutliveError("E_BAD_OPTION", `Expected the \`${name}\` option to be ${expected}, got ${describeValue(value)}`);
  if (typeof o !== "object" || o === null) throw bad("output options", "an object", o);
  const stream = o.stream ?? "stdout";
  if (stream !== "stdout" && stream !== "stderr" && stream !== "both") throw bad("stream", '"stdout", "stderr" or "both"', stream);
  const streams = stream === "both" ? [...OUTPUT_STREAMS] : [stream];
  const offset = (name: string, v: unknown) => {
    if (v === undefined) return 0;
    if (!Number.isSafeInteger(v) || (v as number) < 0) throw bad(name, "a non-negative integer byte offset", v);
    return v as number;
  };
  const from = o.from;
  if (typeof from === "object" && from !== null) {
    for (const k of Object.keys(from)) if (!OUTPUT_STREAMS.includes(k as OutputStream)) throw bad("from", "keyed by stdout or stderr", k);
    return streams.map((s) => ({ stream: s, from: offset(`from.${s}`, (from as Record<string, unknown>)[s]) }));
  }
  const start = offset("from", from);
  return streams.map((s) => ({ stream: s, from: start }));
}
