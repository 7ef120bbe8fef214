// Deep imports, not lib/mod.ts: a command loads only what it uses (not the census and its TOML parser).
import { existsSync, readFileSync } from "node:fs";
import { readExitMarkerNow } from "../../lib/observe/exit-marker.ts";
import {
  checkOutputOptions,
  followOutput,
  LinePrefixer,
  offsetOfKeptLines,
  offsetOfLastLines,
  type OutputChunk,
  type OutputStream,
  streamFiles,
} from "../../lib/output/mod.ts";
import { OutliveError } from "../../lib/errors.ts";
import { inspectPid } from "../../lib/proc/identity.ts";
import { type TaskPaths, taskPaths } from "../../lib/store/layout.ts";
import { parseRecord } from "../../lib/store/record/parse-record.ts";
import { isTerminal } from "../../lib/store/record/record.ts";
import { defaultStorageRoot } from "../../lib/store/storage/storage-root.ts";
import { checkTaskId } from "../../lib/store/record/task-id.ts";
import { help, parseFlags } from "../cli/flags.ts";
import { checkStoragePath } from "../cli/storage-path.ts";
import { UsageError } from "../cli/usage-error.ts";

export const LOGS_HELP = `usage: outlive logs ID [-f] [--tail N] [--from BYTES] [--stderr | --both] [--storage DIR] [--json]

Prints what the task wrote to stdout, from the oldest byte still on disk.
Reads only: works while another supervisor holds the storage.
  -f, --follow    keep printing what comes until the task ends, then exit 0 (Ctrl-C: exit 130)
  --tail N        start at the last N lines (default: all that is kept)
  --from BYTES    start at this absolute byte offset (what a follower stopped at)
  --stderr        print stderr instead of stdout
  --both          print both, each line prefixed by [stdout] or [stderr]
  --storage DIR   task storage (default $OUTLIVE_STORAGE, else $XDG_STATE_HOME/outlive, else ~/.local/state/outlive)
  --json          one JSON line per chunk: {stream, offset, missed, text}`;

export async function logsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    storage: { type: "string" },
    follow: { type: "boolean", short: "f" },
    stderr: { type: "boolean" },
    both: { type: "boolean" },
    tail: { type: "string" },
    from: { type: "string" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  });
  if (values.help) return help(LOGS_HELP);
  if (positionals.length !== 1) throw new UsageError("logs takes exactly one task id");
  if (values.stderr && values.both) throw new UsageError("--stderr and --both: give one of them");
  if (values.tail !== undefined && values.from !== undefined) throw new UsageError("--tail and --from: give one of them");
  const id = checkTaskId(positionals[0]);
  const root = checkStoragePath(values.storage ?? defaultStorageRoot(), { creates: false });
  const paths = taskPaths(root, id);
  if (!existsSync(paths.record)) throw new OutliveError("E_NO_TASK", `No task ${JSON.stringify(id)} in ${root}`);
  const stream: OutputStream | "both" = values.both ? "both" : values.stderr ? "stderr" : "stdout";
  let request = checkOutputOptions({ stream, from: values.from === undefined ? 0 : offsetFlag(values.from) });
  if (values.tail !== undefined) {
    const lines = linesFlag(values.tail);
    request = request.map((r) => ({ ...r, from: offsetOfLastLines(streamFiles(paths, r.stream), lines) }));
  } else if (values.from === undefined) {
    request = request.map((r) => ({ ...r, from: offsetOfKeptLines(streamFiles(paths, r.stream)) }));
  }
  const stop = new AbortController();
  const onInt = () => stop.abort();
  process.once("SIGINT", onInt);
  const prefixer = values.both && !values.json ? new LinePrefixer() : null;
  try {
    const chunks = followOutput({ paths, request, isDone: values.follow ? () => endedOnDisk(paths) : () => true, signal: stop.signal });
    for await (const chunk of chunks) await print(render(chunk, values.json === true, prefixer));
    if (prefixer) await print(prefixer.end());
  } finally {
    process.removeListener("SIGINT", onInt);
  }
  return stop.signal.aborted ? 130 : 0;
}

function render(chunk: OutputChunk, json: boolean, prefixer: LinePrefixer | null): string | Uint8Array {
  if (json) {
    const { stream, offset, missed } = chunk;
    return `${JSON.stringify({ stream, offset, missed, text: new TextDecoder().decode(chunk.data) })}\n`;
  }
  if (prefixer) return prefixer.push(chunk);
  if (chunk.missed > 0) {
    process.stderr.write(`outlive logs: ${chunk.missed} bytes at offset ${chunk.offset} were dropped by the output bound\n`);
    return "";
  }
  return chunk.data;
}

/** Waits for the pipe when it is full, so a slow reader holds back this command, never the task. */
function print(data: string | Uint8Array): Promise<void> {
  if (data.length === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    if (process.stdout.write(data, (e) => (e ? reject(e) : undefined))) resolve();
    else process.stdout.once("drain", resolve);
  });
}

/**
 * Whether the task is over, from the disk alone (no supervisor is asked):
 * its record is terminal, its wrapper wrote an exit code, or the process
 * the record names is gone or is another one now (killed with no marker).
 */
function endedOnDisk(paths: TaskPaths): boolean {
  let text: string;
  try {
    text = readFileSync(paths.record, "utf8");
  } catch {
    return true;
  }
  const parsed = parseRecord(text);
  if (!parsed.ok) return false;
  const r = parsed.record;
  if (isTerminal(r.state)) return true;
  if (readExitMarkerNow(paths.exit).kind === "code") return true;
  if (r.pid === null || r.startTime === null) return false;
  return inspectPid(r.pid)?.startTime !== r.startTime;
}

function offsetFlag(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n)) throw new UsageError(`--from takes a non-negative integer byte offset, got ${JSON.stringify(text)}`);
  return n;
}

function linesFlag(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n)) throw new UsageError(`--tail takes a non-negative whole number of lines, got ${JSON.stringify(text)}`);
  return n;
}
