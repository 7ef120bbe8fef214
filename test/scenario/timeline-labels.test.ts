import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ScenarioReport } from "../../harness/shared/report.ts";
import { renderTimeline } from "../../harness/host/timeline/timeline-svg.ts";

// Every text of a timeline gets a box from its own attributes (monospace: 0.6 em a
// character, ascent 0.8 em, descent 0.2 em), measured here independently of the layout
// code; no two boxes may overlap and none may leave the picture. The busy case is a real
// soak report (153 tasks, 14 module incarnations, 32 marks), kept as a fixture.
interface Box {
  text: string;
  x0: number;
  x1: number;
  y0: number;
  y1: number;
}

function unescape(s: string): string {
  return s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&amp;/g, "&");
}

function textBoxes(svg: string): { boxes: Box[]; width: number; height: number } {
  const root = /<svg [^>]*width="(\d+)" height="(\d+)"[^>]*font-size="(\d+)"/.exec(svg)!;
  const baseSize = Number(root[3]);
  const boxes = [...svg.matchAll(/<text ([^>]*)>([\s\S]*?)<\/text>/g)].map((m) => {
    const attr = (name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(m[1])?.[1];
    const content = unescape(m[2].replace(/<[^>]+>/g, ""));
    const size = Number(attr("font-size") ?? baseSize);
    const w = [...content].length * size * 0.6;
    const x = Number(attr("x"));
    const y = Number(attr("y"));
    const anchor = attr("text-anchor") ?? "start";
    const x0 = anchor === "end" ? x - w : anchor === "middle" ? x - w / 2 : x;
    return { text: content, x0, x1: x0 + w, y0: y - 0.8 * size, y1: y + 0.2 * size };
  });
  return { boxes, width: Number(root[1]), height: Number(root[2]) };
}

function overlaps(boxes: Box[]): Array<[string, string]> {
  const found: Array<[string, string]> = [];
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i];
      const b = boxes[j];
      if (a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1) found.push([a.text, b.text]);
    }
  }
  return found;
}

function outside(boxes: Box[], width: number, height: number): string[] {
  return boxes.filter((b) => b.x0 < 0 || b.x1 > width || b.y0 < 0 || b.y1 > height).map((b) => b.text);
}

describe("timeline.svg labels", () => {
  it("never overlap on the soak's report, and stay inside the picture", () => {
    const report: ScenarioReport = JSON.parse(readFileSync(new URL("./fixtures/soak-report.json", import.meta.url), "utf8"));
    expect(report.marks.length).toBeGreaterThan(20);
    expect(report.incarnations.length).toBeGreaterThan(10);
    const { boxes, width, height } = textBoxes(renderTimeline(report));
    // Every mark, band and task is labelled: nothing was dropped to avoid a collision.
    expect(boxes.length).toBeGreaterThanOrEqual(report.marks.length + report.incarnations.length + 2 * report.tasks.length);
    expect(overlaps(boxes)).toEqual([]);
    expect(outside(boxes, width, height)).toEqual([]);
  });

  it("never overlap for any marks and incarnations, however close together", () => {
    const start = Date.parse("2026-12-01T10:00:00Z");
    const at = (ms: number) => new Date(start + ms).toISOString();
    fc.assert(
      fc.property(
        fc.array(fc.record({ t: fc.integer({ min: 0, max: 600_000 }), label: fc.string({ minLength: 1, maxLength: 90 }) }), { maxLength: 40 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 600_000 }), fc.integer({ min: 0, max: 600_000 })), { maxLength: 20 }),
        fc.integer({ min: 1000, max: 600_000 }),
        (marks, bands, span) => {
          const report = {
            scenario: "busy", suite: "trixie", systemd: 257, verdict: "pass", skipReason: null, error: null, bug: null, why: null,
            startedAt: at(0), endedAt: at(span), checks: [], tasks: [], facts: {}, storages: [], leftovers: [],
            cgroupLayout: "unified", durationMs: span, kept: {},
            marks: marks.map((m, i) => ({ at: at(m.t % (span + 1)), kind: i % 2 ? "restart" : "cgroup.kill", label: m.label })),
            incarnations: bands.map(([a, b], i) => ({
              daemon: "d", pid: 1000 + i, runtime: "node", placement: "systemd-scope",
              startedAt: at(Math.min(a, b) % (span + 1)), endedAt: at(Math.max(a, b) % (span + 1)), end: "drained (restart), then its cgroup killed",
            })),
          } as ScenarioReport;
          const { boxes, width, height } = textBoxes(renderTimeline(report));
          return overlaps(boxes).length === 0 && outside(boxes, width, height).length === 0;
        },
      ),
      { numRuns: 150 },
    );
  });
});
