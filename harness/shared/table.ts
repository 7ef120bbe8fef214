/**
 * A plain text table: one row a line, each column as wide as its widest
 * cell (counted in characters, not UTF-16 units), two spaces between
 * columns, the last one not padded. Columns named in `right` are aligned
 * right (numbers, durations). Pure; the harness's own, since it may not
 * import the CLI's scripts/.
 *
 * @example
 * ```ts
 * import { formatTable } from "./table.ts";
 * console.log(formatTable([["name", "time", "why"], ["a-rather-long-scenario-name", "1.5s", ""], ["x", "12.0s", "ok"]], { right: [1] }));
 * // name                          time  why
 * // a-rather-long-scenario-name   1.5s
 * // x                            12.0s  ok
 * ```
 */
export function formatTable(rows: readonly (readonly string[])[], options: { right?: readonly number[] } = {}): string {
  const length = (s: string) => [...s].length;
  const columns = Math.max(0, ...rows.map((r) => r.length));
  const widths = Array.from({ length: columns }, (_, i) => Math.max(0, ...rows.map((r) => length(r[i] ?? ""))));
  const right = new Set(options.right ?? []);
  return rows.map((r) => r.map((cell, i) => {
    const pad = " ".repeat(widths[i] - length(cell));
    if (right.has(i)) return pad + cell;
    return i === r.length - 1 ? cell : cell + pad;
  }).join("  ").trimEnd()).join("\n");
}
