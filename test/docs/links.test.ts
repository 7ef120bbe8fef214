import { existsSync, statSync } from "node:fs";
import { dirname, join, normalize, posix } from "node:path";
import { describe, expect, it } from "vitest";
import { anchorsOf, githubSlug, linksOf, markdownFiles, type MarkdownDoc, readDoc, ROOT } from "../support/markdown.ts";

// Every relative link in every markdown file of the repository (README.md,
// docs/**, bench/RESULTS.md, container/README.md, examples/**/*.md, …) must
// reach a file or folder that exists, and every #anchor a heading of the file
// it names, by GitHub's rules: docs are moved and split, and a link that
// broke silently is a fact lost to its reader.
const files = markdownFiles();
const docs = new Map<string, MarkdownDoc>(files.map((f) => [f, readDoc(f)]));

function docAt(path: string): MarkdownDoc {
  let doc = docs.get(path);
  if (!doc) docs.set(path, (doc = readDoc(path)));
  return doc;
}

/** What is wrong with `target`, linked from `from`, or null when it resolves. */
function brokenLink(from: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // https:, mailto:: not ours to check here
  const [rawPath, rawAnchor] = target.split("#", 2) as [string, string | undefined];
  const path = decodeURIComponent(rawPath);
  // GitHub takes a link beginning with / from the repository's root.
  const resolved = path === "" ? from : posix.normalize(path.startsWith("/") ? path.slice(1) : posix.join(posix.dirname(from), path));
  if (resolved.startsWith("..")) return `${target} leaves the repository`;
  const onDisk = normalize(join(ROOT, resolved));
  if (!existsSync(onDisk)) return `${target}: no such file (${resolved})`;
  if (rawAnchor === undefined || !resolved.endsWith(".md") || statSync(onDisk).isDirectory()) return null;
  const anchor = decodeURIComponent(rawAnchor);
  return anchorsOf(docAt(resolved)).has(anchor) ? null : `${target}: ${resolved} has no heading with the anchor #${anchor}`;
}

describe("links between the docs", () => {
  it("finds the markdown files, docs/ among them", () => {
    expect(files).toContain("README.md");
    expect(files).toContain("docs/README.md");
    expect(files).toContain("bench/RESULTS.md");
    expect(files.filter((f) => f.startsWith("node_modules/") || f.startsWith("dist/"))).toEqual([]);
  });

  it.each(files)("every relative link and anchor in %s resolves", (file) => {
    const broken = linksOf(docAt(file))
      .map((link) => ({ link, why: brokenLink(file, link.target) }))
      .filter((b) => b.why !== null)
      .map((b) => `${file}:${b.link.line}: ${b.why}`);
    expect(broken).toEqual([]);
  });

  it("slugs headings as GitHub does", () => {
    expect(githubSlug("The spawner: no spawn cut short by a kill of the supervisor's cgroup")).toBe("the-spawner-no-spawn-cut-short-by-a-kill-of-the-supervisors-cgroup");
    expect(githubSlug("The shell of a `shell` task")).toBe("the-shell-of-a-shell-task");
    expect(githubSlug("`outlive ack ID…`, `outlive ack --all`")).toBe("outlive-ack-id-outlive-ack---all");
    expect(githubSlug("Data flow: probe → place")).toBe("data-flow-probe--place");
    expect(githubSlug("`timed_out` and [links](x.md)")).toBe("timed_out-and-links");
  });

  it("numbers a repeated heading's anchor, and takes <a id>", () => {
    const anchors = anchorsOf({ path: "x.md", lines: ["# A", "## A", "<a id=\"here\"></a>", "```", "# not a heading", "```"], fences: [], inFence: [false, false, false, true, true, true] });
    expect([...anchors].sort()).toEqual(["a", "a-1", "here"]);
  });

  it("tells a broken link and a broken anchor from good ones", () => {
    expect(brokenLink("docs/README.md", "guide/cli.md#retention")).toBeNull();
    expect(brokenLink("docs/README.md", "../README.md")).toBeNull();
    expect(brokenLink("docs/README.md", "guide/nope.md")).toMatch(/no such file/);
    expect(brokenLink("docs/README.md", "guide/cli.md#nope")).toMatch(/no heading/);
    expect(brokenLink("docs/README.md", "https://example.com/x")).toBeNull();
    expect(dirname("docs/README.md")).toBe("docs");
  });
});
