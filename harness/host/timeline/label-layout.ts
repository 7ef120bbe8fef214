/**
 * Where a timeline's labels go so that none prints over another: pure
 * geometry, no SVG. Text is measured as monospace (the timeline's font):
 * every character is 0.6 em wide, the line 1.2 em high.
 */

export const CHAR_EM = 0.6;

export function textWidth(text: string, fontSize: number): number {
  return [...text].length * fontSize * CHAR_EM;
}

/** A label's horizontal extent; `x` is where it is anchored. */
export interface Span {
  x0: number;
  x1: number;
}

/**
 * Assigns each span a row so that no two spans in a row overlap (with
 * `gap` between them): greedy, left to right, first row that has room.
 * Returns the row of each span, in the order given, and how many rows.
 */
export function assignRows(spans: readonly Span[], gap = 6): { rows: number[]; count: number } {
  const order = spans.map((s, i) => i).sort((a, b) => spans[a].x0 - spans[b].x0);
  const rowEnds: number[] = [];
  const rows = new Array<number>(spans.length).fill(0);
  for (const i of order) {
    let row = rowEnds.findIndex((end) => end + gap <= spans[i].x0);
    if (row === -1) {
      row = rowEnds.length;
      rowEnds.push(-Infinity);
    }
    rowEnds[row] = spans[i].x1;
    rows[i] = row;
  }
  return { rows, count: rowEnds.length };
}

/**
 * A label at `x` that must stay within [left, right]: drawn rightwards from
 * x when it fits, else leftwards (ending at x), else cut to fit.
 */
export function anchorLabel(text: string, x: number, fontSize: number, left: number, right: number): { text: string; x: number; anchor: "start" | "end"; span: Span } {
  const w = textWidth(text, fontSize);
  if (x + 3 + w <= right) return { text, x: x + 3, anchor: "start", span: { x0: x + 3, x1: x + 3 + w } };
  if (x - 3 - w >= left) return { text, x: x - 3, anchor: "end", span: { x0: x - 3 - w, x1: x - 3 } };
  const fit = Math.max(1, Math.floor((right - left) / (fontSize * CHAR_EM)) - 1);
  const cut = `${[...text].slice(0, fit - 1).join("")}…`;
  return { text: cut, x: left, anchor: "start", span: { x0: left, x1: left + textWidth(cut, fontSize) } };
}

/** The axis step (ms) from a list of round values, so that tick labels are at least `minPx` apart. */
export function axisStep(spanMs: number, plotW: number, minPx = 48): number {
  const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600].map((s) => s * 1000);
  return steps.find((s) => (s / spanMs) * plotW >= minPx) ?? steps[steps.length - 1];
}

/** Cuts `text` so that it is at most `maxPx` wide. */
export function fitText(text: string, maxPx: number, fontSize: number): string {
  const max = Math.floor(maxPx / (fontSize * CHAR_EM));
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, Math.max(1, max - 1)).join("")}…`;
}
