import { readFileSync } from "node:fs";
import { droppedMarkerPath, type TaskPaths } from "../store/layout.ts";
import type { OutputStream } from "./request.ts";

/** The output file of a stream, and the marker the trimmer keeps beside it. */
export function streamFiles(paths: TaskPaths, stream: OutputStream): { data: string; dropped: string } {
  const data = paths[stream];
  return { data, dropped: droppedMarkerPath(data) };
}

/**
 * How many bytes at the head of a stream were dropped by the bound: the
 * trimmer writes this before it punches, so every byte below it may be a
 * hole. 0 when nothing was dropped (no marker) or the marker is unreadable
 * mid-rename (it is replaced whole, never rewritten in place).
 */
export function readDropped(markerPath: string): number {
  let text: string;
  try {
    text = readFileSync(markerPath, "latin1");
  } catch {
    return 0;
  }
  const n = Number(text.trim());
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}
