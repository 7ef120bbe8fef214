import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { writeFilesAtomic } from "../../lib/store/write/atomic-batch.ts";

const files = (dir: string, n: number) => Array.from({ length: n }, (_, i) => ({ path: join(dir, `r${i}.json`), data: `{"n":${i}}\n` }));

it("writes every file, replacing old content, and leaves no temp file (syncfs path)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "outlive-batch-"));
  writeFileSync(join(dir, "r0.json"), "old\n");
  const flushes: string[] = [];
  await writeFilesAtomic(files(dir, 50), { flush: async (p) => void flushes.push(p) });
  expect(flushes).toHaveLength(2); // once for the temp files, once for the renames
  expect(readFileSync(join(dir, "r0.json"), "utf8")).toBe('{"n":0}\n');
  expect(readdirSync(dir).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  rmSync(dir, { recursive: true });
});

it("falls back to fsync per file and directory when the file system cannot be flushed", async () => {
  const dir = mkdtempSync(join(tmpdir(), "outlive-batch-"));
  await writeFilesAtomic(files(dir, 20), { flush: async () => { throw new Error("no sync -f here"); } });
  expect(readFileSync(join(dir, "r19.json"), "utf8")).toBe('{"n":19}\n');
  expect(readdirSync(dir)).toHaveLength(20);
  rmSync(dir, { recursive: true });
});

it("with the real syncfs (coreutils sync -f)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "outlive-batch-"));
  await writeFilesAtomic(files(dir, 5));
  expect(readdirSync(dir).sort()).toEqual(["r0.json", "r1.json", "r2.json", "r3.json", "r4.json"]);
  rmSync(dir, { recursive: true });
});

it("a temp file that cannot be written leaves nothing behind and nothing replaced", async () => {
  const dir = mkdtempSync(join(tmpdir(), "outlive-batch-"));
  writeFileSync(join(dir, "r0.json"), "old\n");
  const bad = [...files(dir, 3), { path: join(dir, "missing-dir", "x.json"), data: "x" }];
  await expect(writeFilesAtomic(bad, { flush: async () => {} })).rejects.toMatchObject({ code: "ENOENT" });
  expect(readFileSync(join(dir, "r0.json"), "utf8")).toBe("old\n");
  expect(readdirSync(dir)).toEqual(["r0.json"]);
  rmSync(dir, { recursive: true });
});
