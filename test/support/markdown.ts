import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The checkout's root, with a trailing slash. */
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** A fenced code block of a markdown file. Lines are 0-based indexes into `MarkdownDoc.lines`. */
export interface Fence {
  /** The info string's first word (`ts`, `sh`, …), or "" for none. */
  lang: string;
  body: string;
  /** The line of the opening fence. */
  start: number;
  /** The line of the closing fence (the last line, for a fence never closed). */
  end: number;
  /** Whether `<!-- run -->` is the line just before the fence: test/docs/examples.test.ts runs it. */
  runnable: boolean;
}

export interface MarkdownDoc {
  /** Relative to the root, with `/`. */
  path: string;
  lines: string[];
  fences: Fence[];
  /** For each line, whether it is part of a fenced block (its fences included). */
  inFence: boolean[];
}

export const RUN_MARKER = "<!-- run -->";

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;

/**
 * Reads a markdown file and finds its fenced blocks (CommonMark's rules, as far
 * as these docs need them: a fence closes on the same character, at least as
 * long, with nothing after it; an indented fence inside a list item counts too).
 */
export function readDoc(path: string): MarkdownDoc {
  const text = readFileSync(join(ROOT, path), "utf8");
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const inFence = lines.map(() => false);
  const fences: Fence[] = [];
  let open: { marker: string; lang: string; start: number } | null = null;
  lines.forEach((line, i) => {
    const trimmed = line.trimStart();
    if (!open) {
      const m = FENCE.exec(trimmed);
      if (!m) return;
      open = { marker: m[1]!, lang: m[2]!.toLowerCase(), start: i };
      inFence[i] = true;
      return;
    }
    inFence[i] = true;
    const close = new RegExp(`^${open.marker[0] === "`" ? "`" : "~"}{${open.marker.length},}\\s*$`);
    if (close.test(trimmed)) {
      fences.push(fence(lines, open, i));
      open = null;
    }
  });
  if (open) fences.push(fence(lines, open, lines.length - 1));
  return { path, lines, fences, inFence };
}

function fence(lines: string[], open: { lang: string; start: number }, end: number): Fence {
  return {
    lang: open.lang,
    body: lines.slice(open.start + 1, end).join("\n"),
    start: open.start,
    end,
    runnable: open.start > 0 && lines[open.start - 1]!.trim() === RUN_MARKER,
  };
}

/**
 * The body of the first ```lang block after the first place `marker` occurs in
 * the doc at `path` (relative to the root): how tests read a file a page shows
 * (`scenarios/my-bug.ts`, the GitLab job) from wherever the page keeps it.
 */
export function fencedBlockAfter(path: string, marker: string, lang = "ts"): string {
  const doc = readDoc(path);
  const at = doc.lines.findIndex((line) => line.includes(marker));
  if (at === -1) throw new Error(`${path} does not mention ${marker}`);
  const block = doc.fences.find((f) => f.start > at && f.lang === lang);
  if (!block) throw new Error(`${path} has no \`\`\`${lang} block after ${marker}`);
  return block.body;
}

/** Every markdown file of the checkout that git knows or would add (tracked, or untracked and not ignored). */
export function markdownFiles(): string[] {
  const out = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "--", "*.md"], { cwd: ROOT, encoding: "utf8" });
  return [...new Set(out.split("\n").filter(Boolean))]
    .filter((f) => !/(^|\/)(node_modules|dist)\//.test(f))
    .sort();
}

/** A heading's text as GitHub renders it, for its anchor: links become their text and HTML tags go (the slug drops the rest). */
function headingText(markdown: string): string {
  return markdown
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "");
}

/**
 * The anchor GitHub gives a heading (github-slugger's rules): lower case, every
 * character that is not a letter, mark, number, connector (`_`), space or `-`
 * dropped, each space a `-`; a repeated slug gets `-1`, `-2`, … in order.
 *
 * @example githubSlug("The spawner: no spawn cut short by a kill of the supervisor's cgroup")
 *   // "the-spawner-no-spawn-cut-short-by-a-kill-of-the-supervisors-cgroup"
 */
export function githubSlug(heading: string): string {
  return headingText(heading).toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** Every anchor a link may name in the doc: its headings' slugs (repeats numbered) and `<a id|name="…">`. */
export function anchorsOf(doc: MarkdownDoc): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  doc.lines.forEach((line, i) => {
    if (doc.inFence[i]) return;
    const h = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (h) {
      const slug = githubSlug(h[1]!);
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      anchors.add(n === 0 ? slug : `${slug}-${n}`);
    }
    for (const a of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(a[1]!);
  });
  return anchors;
}

/** A link found in a doc's text (not in code), with the line it is on (1-based). */
export interface DocLink {
  target: string;
  line: number;
}

/** Every inline link and reference definition outside fenced blocks and code spans. */
export function linksOf(doc: MarkdownDoc): DocLink[] {
  // Code spans may run across lines, so blank out the fenced lines and read the text as a whole.
  const text = doc.lines.map((line, i) => (doc.inFence[i] ? "" : line)).join("\n");
  const noCode = text.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (span) => span.replace(/[^\n]/g, " "));
  const links: DocLink[] = [];
  const lineOf = (index: number) => noCode.slice(0, index).split("\n").length;
  for (const m of noCode.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ target: m[1]!, line: lineOf(m.index!) });
  for (const m of noCode.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)) links.push({ target: m[1]!, line: lineOf(m.index!) });
  return links;
}
