import { anchorLabel, assignRows, axisStep, fitText } from "./label-layout.ts";
import type { ScenarioReport, TaskFacts } from "../../shared/report.ts";

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

/** Colour and glyph of each fate, so a glance tells how every task ended. */
const FATES: Record<string, { color: string; glyph: "circle" | "cross" | "diamond" | "square" | "triangle" | "arrow" }> = {
  exited: { color: "#2e7d32", glyph: "circle" },
  killed: { color: "#c62828", glyph: "cross" },
  timed_out: { color: "#6a1b9a", glyph: "diamond" },
  oom_killed: { color: "#8d6e63", glyph: "square" },
  lost: { color: "#616161", glyph: "triangle" },
  never_started: { color: "#9e9e9e", glyph: "square" },
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

/** Font size of every label but the title; row height of stacked labels. */
const FONT = 11;
const ROW_H = 13;

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
  const left = 10;
  const right = WIDTH - 10;

  // Mark labels stacked in rows at the top, band labels in rows at the bottom: no two share a row where they would touch.
  const marks = report.marks.map((m) => {
    const mx = x(ms(m.at) ?? t0);
    return { m, mx, label: anchorLabel(m.label, mx, FONT, left, right) };
  });
  const markRows = assignRows(marks.map((k) => k.label.span));
  const marksTop = TOP + 4;
  const lanesTop = marksTop + Math.max(1, markRows.count) * ROW_H + 16;
  const bandsTop = lanesTop + Math.max(1, report.tasks.length) * LANE_H + 14;
  const bands = report.incarnations.map((inc) => {
    const a = x(ms(inc.startedAt) ?? t0);
    const b = x(ms(inc.endedAt) ?? t1);
    const text = `${inc.daemon} module ${inc.pid} (${inc.runtime}, ${inc.placement})${inc.end ? `: ${inc.end}` : ""}`;
    return { a, b, label: anchorLabel(text, a, FONT, left, right) };
  });
  const bandRows = assignRows(bands.map((k) => k.label.span));
  const axisY = bandsTop + bandRows.count * ROW_H + 20;
  const height = axisY + 16;

  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" font-family="monospace" font-size="${FONT}">`);
  out.push(`<rect width="100%" height="100%" fill="#fff"/>`);
  out.push(`<text x="10" y="20" font-size="14" font-weight="bold">${esc(fitText(`${report.scenario} on ${report.suite} (systemd ${report.systemd}): ${report.verdict}`, right - left, 14))}</text>`);
  const summary = report.skipReason ?? report.error?.split("\n")[0] ?? `${report.checks.filter((c) => c.ok).length}/${report.checks.length} checks passed · ${report.cgroupLayout}`;
  out.push(`<text x="10" y="38">${esc(fitText(summary, right - left, FONT))}</text>`);

  // Incarnation bands: every module process, shaded across all lanes, its label in the rows below the lanes.
  bands.forEach(({ a, b, label }, i) => {
    const fill = i % 2 === 0 ? "#e3f2fd" : "#fff3e0";
    out.push(`<rect x="${a}" y="${marksTop - 12}" width="${Math.max(1, b - a)}" height="${bandsTop - marksTop}" fill="${fill}" stroke="#90a4ae" stroke-dasharray="2,2"/>`);
    const ly = bandsTop + bandRows.rows[i] * ROW_H;
    out.push(`<line x1="${a}" y1="${bandsTop - 12}" x2="${a}" y2="${ly}" stroke="#90a4ae" stroke-dasharray="1,2"/>`);
    out.push(text(label, ly, "#455a64"));
  });

  // Marks: restarts, cgroup kills, task kills; each label in the first row where it has room.
  marks.forEach(({ m, mx, label }, i) => {
    const color = /kill/.test(m.kind) ? "#c62828" : m.kind === "ready" ? "#2e7d32" : "#37474f";
    const ly = marksTop + markRows.rows[i] * ROW_H;
    out.push(`<line x1="${mx}" y1="${ly + 2}" x2="${mx}" y2="${axisY - 10}" stroke="${color}" stroke-width="1.5"/>`);
    out.push(text(label, ly, color));
  });

  // Task lanes.
  report.tasks.forEach((t, i) => {
    const y = lanesTop + i * LANE_H + LANE_H / 2;
    const start = ms(t.startedAt) ?? ms(t.createdAt) ?? t0;
    const end = ms(t.finishedAt);
    const fate = FATES[t.fate] ?? OPEN;
    const a = x(start);
    const b = x(end ?? t1);
    out.push(`<text x="10" y="${y + 4}">${esc(fitText(`${t.id} [${t.placement}]`, LABEL_W - 20, FONT))}</text>`);
    out.push(`<line x1="${a}" y1="${y}" x2="${b}" y2="${y}" stroke="${fate.color}" stroke-width="6" stroke-linecap="butt" opacity="0.55"/>`);
    out.push(glyph(fate.glyph, b, y, fate.color));
    out.push(text(anchorLabel(fateLabel(t), b + 7, FONT, LABEL_W, right), y - 8, fate.color));
  });

  // Axis in seconds from the first moment, ticks far enough apart for their labels.
  out.push(`<line x1="${LABEL_W}" y1="${axisY - 10}" x2="${WIDTH - RIGHT_W}" y2="${axisY - 10}" stroke="#000"/>`);
  const step = axisStep(span, plotW);
  for (let t = 0; t <= span; t += step) {
    const tx = x(t0 + t);
    out.push(`<line x1="${tx}" y1="${axisY - 14}" x2="${tx}" y2="${axisY - 6}" stroke="#000"/><text x="${tx}" y="${axisY + 4}" text-anchor="middle">${t / 1000}s</text>`);
  }
  const legend = Object.entries(FATES).map(([k, v]) => `<tspan fill="${v.color}">■ ${k}</tspan>`).join("  ");
  out.push(`<text x="${LABEL_W}" y="${56}">${legend}  <tspan fill="${OPEN.color}">► still running</tspan></text>`);
  out.push("</svg>");
  return out.join("\n");
}

function text(label: ReturnType<typeof anchorLabel>, y: number, color: string): string {
  const anchor = label.anchor === "end" ? ` text-anchor="end"` : "";
  return `<text x="${Math.round(label.x * 10) / 10}" y="${y}"${anchor} fill="${color}">${esc(label.text)}</text>`;
}
