import type { ScenarioReport, TaskFacts } from "./report.ts";

/**
 * An SVG timeline of one scenario run: module incarnations as shaded bands,
 * restarts and kills as vertical marks, one lane per task from its start to
 * its end, and the end drawn by fate. Pure: report in, SVG text out.
 */

const WIDTH = 1100;
const LABEL_W = 230;
const RIGHT_W = 40;
const TOP = 70;
const LANE_H = 26;
const MARK_LABEL_H = 12;

/** Colour and glyph of each fate, so a glance tells how every task ended. */
const FATES: Record<string, { color: string; glyph: "circle" | "cross" | "diamond" | "square" | "triangle" | "arrow" }> = {
  exited: { color: "#2e7d32", glyph: "circle" },
  killed: { color: "#c62828", glyph: "cross" },
  timed_out: { color: "#6a1b9a", glyph: "diamond" },
  oom_killed: { color: "#8d6e63", glyph: "square" },
  lost: { color: "#616161", glyph: "triangle" },
};
const OPEN = { color: "#1565c0", glyph: "arrow" as const };

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function ms(iso: string | null | undefined): number | null {
  if (!iso) return null;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? null : t;
}

function glyph(kind: string, x: number, y: number, color: string): string {
  const r = 6;
  switch (kind) {
    case "circle":
      return `<circle cx="${x}" cy="${y}" r="${r}" fill="${color}"/>`;
    case "cross":
      return `<path d="M${x - r} ${y - r}L${x + r} ${y + r}M${x - r} ${y + r}L${x + r} ${y - r}" stroke="${color}" stroke-width="3"/>`;
    case "diamond":
      return `<path d="M${x} ${y - r}L${x + r} ${y}L${x} ${y + r}L${x - r} ${y}Z" fill="${color}"/>`;
    case "square":
      return `<rect x="${x - r}" y="${y - r}" width="${2 * r}" height="${2 * r}" fill="${color}"/>`;
    case "triangle":
      return `<path d="M${x} ${y - r}L${x + r} ${y + r}L${x - r} ${y + r}Z" fill="${color}"/>`;
    default:
      return `<path d="M${x - r} ${y - r}L${x + r} ${y}L${x - r} ${y + r}Z" fill="${color}"/>`;
  }
}

function fateLabel(t: TaskFacts): string {
  const code = t.exitCode === null ? "" : ` ${t.exitCode}`;
  return `${t.fate}${code} · out ${t.stdoutBytes} B · delivered ${t.completionsDelivered}×`;
}

export function renderTimeline(report: ScenarioReport): string {
  const times = [
    ms(report.startedAt), ms(report.endedAt),
    ...report.incarnations.flatMap((i) => [ms(i.startedAt), ms(i.endedAt)]),
    ...report.tasks.flatMap((t) => [ms(t.createdAt), ms(t.finishedAt)]),
    ...report.marks.map((m) => ms(m.at)),
  ].filter((t): t is number => t !== null);
  const t0 = Math.min(...times);
  const t1 = Math.max(t0 + 1000, ...times);
  const span = t1 - t0;
  const plotW = WIDTH - LABEL_W - RIGHT_W;
  const x = (t: number) => Math.round((LABEL_W + ((t - t0) / span) * plotW) * 10) / 10;
  const marksTop = TOP;
  const lanesTop = marksTop + Math.min(report.marks.length, 8) * MARK_LABEL_H + 24;
  const height = lanesTop + Math.max(1, report.tasks.length) * LANE_H + 60;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" font-family="monospace" font-size="11">`);
  out.push(`<rect width="100%" height="100%" fill="#fff"/>`);
  out.push(`<text x="10" y="20" font-size="14" font-weight="bold">${esc(`${report.scenario} on ${report.suite} (systemd ${report.systemd}): ${report.verdict}`)}</text>`);
  out.push(`<text x="10" y="38">${esc(report.skipReason ?? report.error?.split("\n")[0] ?? `${report.checks.filter((c) => c.ok).length}/${report.checks.length} checks passed · ${report.cgroupLayout}`)}</text>`);

  // Incarnation bands: every module process, shaded across all lanes.
  report.incarnations.forEach((inc, i) => {
    const a = x(ms(inc.startedAt) ?? t0);
    const b = x(ms(inc.endedAt) ?? t1);
    const fill = i % 2 === 0 ? "#e3f2fd" : "#fff3e0";
    out.push(`<rect x="${a}" y="${marksTop - 12}" width="${Math.max(1, b - a)}" height="${height - marksTop - 30}" fill="${fill}" stroke="#90a4ae" stroke-dasharray="2,2"/>`);
    out.push(`<text x="${a + 3}" y="${height - 32}" fill="#455a64">${esc(`${inc.daemon} module ${inc.pid} (${inc.runtime}, ${inc.placement})${inc.end ? `: ${inc.end}` : ""}`)}</text>`);
  });

  // Marks: restarts, cgroup kills, task kills; labels stacked so they stay readable.
  report.marks.forEach((m, i) => {
    const mx = x(ms(m.at) ?? t0);
    const color = /kill/.test(m.kind) ? "#c62828" : m.kind === "ready" ? "#2e7d32" : "#37474f";
    const ly = marksTop + (i % 8) * MARK_LABEL_H;
    out.push(`<line x1="${mx}" y1="${ly}" x2="${mx}" y2="${height - 44}" stroke="${color}" stroke-width="1.5"/>`);
    // Labels near the right edge are drawn leftwards, so they stay inside the picture.
    const anchor = mx > WIDTH * 0.6 ? `x="${mx - 3}" text-anchor="end"` : `x="${mx + 3}"`;
    out.push(`<text ${anchor} y="${ly}" fill="${color}">${esc(m.label)}</text>`);
  });

  // Task lanes.
  report.tasks.forEach((t, i) => {
    const y = lanesTop + i * LANE_H + LANE_H / 2;
    const start = ms(t.startedAt) ?? ms(t.createdAt) ?? t0;
    const end = ms(t.finishedAt);
    const fate = FATES[t.fate] ?? OPEN;
    const a = x(start);
    const b = x(end ?? t1);
    out.push(`<text x="10" y="${y + 4}">${esc(`${t.id} [${t.placement}]`)}</text>`);
    out.push(`<line x1="${a}" y1="${y}" x2="${b}" y2="${y}" stroke="${fate.color}" stroke-width="6" stroke-linecap="butt" opacity="0.55"/>`);
    out.push(glyph(fate.glyph, b, y, fate.color));
    const labelX = Math.min(b + 10, WIDTH - 330);
    out.push(`<text x="${labelX}" y="${y - 8}" fill="${fate.color}">${esc(fateLabel(t))}</text>`);
  });

  // Axis in seconds from the first moment.
  const axisY = height - 20;
  out.push(`<line x1="${LABEL_W}" y1="${axisY - 10}" x2="${WIDTH - RIGHT_W}" y2="${axisY - 10}" stroke="#000"/>`);
  const step = span > 60_000 ? 10_000 : span > 20_000 ? 5_000 : span > 8_000 ? 2_000 : 1_000;
  for (let t = 0; t <= span; t += step) {
    const tx = x(t0 + t);
    out.push(`<line x1="${tx}" y1="${axisY - 14}" x2="${tx}" y2="${axisY - 6}" stroke="#000"/><text x="${tx - 6}" y="${axisY + 4}">${t / 1000}s</text>`);
  }
  const legend = Object.entries(FATES).map(([k, v]) => `<tspan fill="${v.color}">■ ${k}</tspan>`).join("  ");
  out.push(`<text x="${LABEL_W}" y="${56}">${legend}  <tspan fill="${OPEN.color}">► still running</tspan></text>`);
  out.push("</svg>");
  return out.join("\n");
}
