import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it, vi } from "vitest";

// Every `@example` in lib/census is meant to run as written; run each one.
const LIB = fileURLToPath(new URL("../../lib/census/", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "census-examples-"));
// The refusal-log examples make their own folders under /tmp; remove exactly those.
const madeByExamples = () => readdirSync("/tmp").filter((n) => n.startsWith("outlive-refusals-"));
const before = new Set(madeByExamples());
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
  for (const name of madeByExamples()) if (!before.has(name)) rmSync(join("/tmp", name), { recursive: true, force: true });
});

function examples(file: string): string[] {
  const text = readFileSync(join(LIB, file), "utf8");
  const found: string[] = [];
  for (const m of text.matchAll(/@example\s*\n\s*\*\s*```ts\n([\s\S]*?)\n\s*\*\s*```/g)) {
    const code = m[1].split("\n").map((line) => line.replace(/^\s*\* ?/, "")).join("\n");
    // Relative imports are written from the example's own folder.
    found.push(code.replace(/from "(\.\.?\/[^"]+)"/g, (_, rel: string) => `from ${JSON.stringify(resolve(dirname(join(LIB, file)), rel))}`));
  }
  return found;
}

// The census's files, in its subfolders too (scan/, recognise/, agent-config/, decide/), relative to LIB.
const files = (readdirSync(LIB, { recursive: true }) as string[]).filter((f) => f.endsWith(".ts")).sort();
const cases = files.flatMap((file) => examples(file).map((code, i) => [`${file} #${i + 1}`, code] as const));

describe("the @example blocks in lib/census", () => {
  it("exist on every exported function", () => {
    for (const file of files) {
      const text = readFileSync(join(LIB, file), "utf8");
      const exported = [...text.matchAll(/export (?:async )?function (\w+)/g)].length;
      const withExample = examples(file).length;
      if (exported > 0 && !file.endsWith("mod.ts")) expect(withExample, file).toBeGreaterThan(0);
    }
    expect(cases.length).toBeGreaterThan(15);
  });

  it.each(cases)("%s runs", async (name, code) => {
    const path = join(scratch, `${name.replace(/[^\w]/g, "_")}.ts`);
    writeFileSync(path, code + "\nexport {};\n");
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      await import(path);
    } finally {
      log.mockRestore();
    }
  });
});
