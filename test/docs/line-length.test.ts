import { describe, expect, it } from "vitest";
import { markdownFiles, readDoc } from "../support/markdown.ts";

// The README is a front door, not the manual: at most 200 lines. And no line of
// any markdown file is over 400 characters outside code blocks: a table row
// that long (one was 5,999) is a page nobody can read or diff; make it a
// section or a list.
const MAX_LINE = 400;
const MAX_README_LINES = 200;

describe("the docs' shape", () => {
  it(`the README is at most ${MAX_README_LINES} lines`, () => {
    expect(readDoc("README.md").lines.length).toBeLessThanOrEqual(MAX_README_LINES);
  });

  it.each(markdownFiles())(`no line of %s is over ${MAX_LINE} characters outside code blocks`, (file) => {
    const doc = readDoc(file);
    const long = doc.lines
      .map((line, i) => ({ line, i }))
      .filter(({ line, i }) => !doc.inFence[i] && [...line].length > MAX_LINE)
      .map(({ line, i }) => `${file}:${i + 1}: ${[...line].length} characters: ${line.slice(0, 60)}…`);
    expect(long).toEqual([]);
  });
});
