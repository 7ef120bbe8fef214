/** A plain table: one row a line, columns padded to fit (the last one is not). */
export function formatTable(rows: string[][]): string {
  const widths = rows[0].map((_, i) => rows.reduce((w, r) => Math.max(w, r[i].length), 0));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join("  ")).join("\n");
}
