import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { transformSync } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import { type Fence, markdownFiles, readDoc, ROOT, RUN_MARKER } from "../support/markdown.ts";
import { runToEnd } from "../support/run-to-end.ts";

/*
 * The examples in the docs run. A fenced block with `<!-- run -->` on the line
 * just before it, in the README or anywhere under docs/, is taken out and run
 * for real, as a reader would run it:
 *
 * - ```ts: its types stripped by esbuild, run by this Node as an ES module from
 *   a temp project whose node_modules holds this checkout as `outlive` (the
 *   built package: dist/, which vitest's global setup builds) beside the
 *   checkout's own dependencies;
 * - ```sh: run by `bash -euo pipefail` with `outlive` on PATH (the built
 *   CLI, dist/scripts/bin.js, as the package installs it).
 *
 * Each gets a storage of its own in a temp dir ($OUTLIVE_STORAGE); it must end
 * by itself, exit 0 and leave no task live (whatever it left is stopped after).
 * So the marked examples use standalone mode (process-group placement) and short
 * tasks. Examples that need root, systemd, containers or another program (a
 * daemon-mode open, launchAgent with `claude`, the scenarios of
 * docs/guide/harness.md, which test/scenario/fresh-project.test.ts runs in real
 * containers) are not marked, and their page says so.
 */
const BIN = join(ROOT, "dist", "scripts", "bin.js");
const temp = mkdtempSync(join(tmpdir(), "outlive-docs-examples-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

// The project a reader's example runs in: `outlive` is this checkout; its dependencies (ajv, …) are the checkout's.
const project = join(temp, "project");
mkdirSync(join(project, "node_modules"), { recursive: true });
symlinkSync(ROOT, join(project, "node_modules", "outlive"));
for (const entry of readdirSync(join(ROOT, "node_modules"))) {
  if (entry !== "outlive") symlinkSync(join(ROOT, "node_modules", entry), join(project, "node_modules", entry));
}
writeFileSync(join(project, "package.json"), JSON.stringify({ name: "docs-example", private: true, type: "module" }));
// `outlive` on PATH, as a global install puts it there.
const binDir = join(temp, "bin");
mkdirSync(binDir);
// `--`: as the installed command's shebang has it (Node 20 would take `run --env-file` as its own option).
writeFileSync(join(binDir, "outlive"), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} -- ${JSON.stringify(BIN)} "$@"\n`);
chmodSync(join(binDir, "outlive"), 0o755);

interface Example {
  name: string;
  fence: Fence;
}

const examples: Example[] = markdownFiles()
  .filter((f) => f === "README.md" || f.startsWith("docs/"))
  .flatMap((file) => readDoc(file).fences.filter((f) => f.runnable).map((fence) => ({ name: `${file}:${fence.start + 1} (${fence.lang})`, fence })));

let serial = 0;

function environment(storage: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, OUTLIVE_STORAGE: storage, PATH: `${binDir}:${process.env.PATH}`, NO_COLOR: "1" };
  delete env.OUTLIVE_MODE;
  return env;
}

async function runExample(fence: Fence, storage: string): Promise<{ status: number | null; out: string }> {
  const env = environment(storage);
  if (fence.lang === "ts") {
    const file = join(project, `example-${++serial}.mjs`);
    writeFileSync(file, transformSync(fence.body, { loader: "ts", format: "esm", target: "node20" }).code);
    const r = await runToEnd(process.execPath, [file], { cwd: project, env, timeoutMs: 60_000 });
    return { status: r.status, out: `${r.stdout}${r.stderr}${r.error ? String(r.error) : ""}` };
  }
  const dir = join(temp, `sh-${++serial}`);
  mkdirSync(dir);
  const r = await runToEnd("bash", ["-euo", "pipefail", "-c", fence.body], { cwd: dir, env, timeoutMs: 60_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}${r.error ? String(r.error) : ""}` };
}

/** The tasks an example left live in its storage (none is the promise), then all of them stopped. */
async function leftLive(storage: string): Promise<string[]> {
  const ps = await runToEnd(process.execPath, [BIN, "ps", "--json", "--storage", storage], { timeoutMs: 60_000 });
  const live = ps.status === 0 ? (JSON.parse(ps.stdout).tasks as { id: string; state: string }[]).filter((t) => ["starting", "running", "killing"].includes(t.state)).map((t) => `${t.id} ${t.state}`) : [];
  await runToEnd(process.execPath, [BIN, "stop-all", "--storage", storage], { timeoutMs: 60_000 });
  return live;
}

describe("the docs' runnable examples", () => {
  it("the README's library and CLI examples, and one in each guide that has code, are marked to run", () => {
    const names = examples.map((e) => e.name);
    expect(names.filter((n) => n.startsWith("README.md:")).map((n) => n.replace(/:\d+/, ""))).toEqual(["README.md (ts)", "README.md (sh)"]);
    for (const page of ["docs/guide/library.md", "docs/guide/cli.md", "docs/guide/output.md", "docs/guide/pty.md"]) {
      expect(names.some((n) => n.startsWith(`${page}:`)), page).toBe(true);
    }
    expect(examples.every((e) => e.fence.lang === "ts" || e.fence.lang === "sh"), `only ts and sh run: ${names}`).toBe(true);
  });

  it("a marker stands only before a fence", () => {
    for (const file of markdownFiles()) {
      const doc = readDoc(file);
      doc.lines.forEach((line, i) => {
        if (line.trim() !== RUN_MARKER || doc.inFence[i]) return;
        expect(doc.fences.some((f) => f.start === i + 1), `${file}:${i + 1}: ${RUN_MARKER} not followed by a fence`).toBe(true);
      });
    }
  });

  it.each(examples)("$name runs, ends by itself, exits 0 and leaves nothing live", async ({ fence }) => {
    const storage = join(temp, `storage-${++serial}`);
    const r = await runExample(fence, storage);
    const live = await leftLive(storage);
    expect(r.out && r.status !== 0 ? r.out : "").toBe("");
    expect(r.status).toBe(0);
    expect(live).toEqual([]);
  }, 120_000);
});
