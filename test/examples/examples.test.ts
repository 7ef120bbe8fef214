import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";

// Every `@example` behind lib/mod.ts is meant to run as written; run each one
// with Deno (which runs TypeScript as it is), in its own process, and check
// that it exits 0, leaves no process running and nothing in its temp dir.
// lib/census has its own runner (test/census/examples.test.ts), so it is left out here.
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const LIB = join(ROOT, "lib");
const DENO = join(ROOT, "node_modules/.bin/deno");
const COVERED_ELSEWHERE = join(LIB, "census");
const scratch = mkdtempSync(join(tmpdir(), "outlive-examples-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const EXAMPLE = /@example\s*\n\s*\*\s*```ts\n([\s\S]*?)\n\s*\*\s*```/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return path === COVERED_ELSEWHERE ? [] : sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** The example's code, its relative imports made absolute (they are written from the example's own folder). */
function examples(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(EXAMPLE)].map((m) => {
    const code = m[1].split("\n").map((line) => line.replace(/^\s*\* ?/, "")).join("\n");
    const absolute = (rel: string) => JSON.stringify(pathToFileURL(resolve(dirname(file), rel)).href);
    return code
      .replace(/from "(\.\.?\/[^"]+)"/g, (_, rel: string) => `from ${absolute(rel)}`)
      .replace(/import\("(\.\.?\/[^"]+)"\)/g, (_, rel: string) => `import(${absolute(rel)})`);
  });
}

const cases = sourceFiles(LIB).flatMap((file) =>
  examples(file).map((code, i) => [`${relative(ROOT, file)} #${i + 1}`, code] as const),
);

/** Pids of live processes whose environment carries `marker` (children inherit it). */
function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (`\0${readFileSync(`/proc/${name}/environ`, "latin1")}`.includes(`\0${marker}\0`)) pids.push(Number(name));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runDeno(file: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((done) => {
    execFile(
      DENO,
      ["run", "-A", "--no-prompt", "--config", join(ROOT, "deno.json"), file],
      { cwd, env, timeout: 30_000, killSignal: "SIGKILL", maxBuffer: 4 << 20 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
        done({ code, stdout, stderr: error && code === null ? `${stderr}\n${error.message}` : stderr });
      },
    );
  });
}

describe("the @example blocks behind lib/mod.ts", () => {
  it("exist on every runtime export of lib/mod.ts", () => {
    const program = ts.createProgram([join(LIB, "mod.ts")], {
      noEmit: true,
      allowImportingTsExtensions: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      types: ["node"],
    });
    const checker = program.getTypeChecker();
    const mod = checker.getSymbolAtLocation(program.getSourceFile(join(LIB, "mod.ts"))!)!;
    const missing: string[] = [];
    let values = 0;
    for (const exported of checker.getExportsOfModule(mod)) {
      const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      if (!(target.flags & ts.SymbolFlags.Value)) continue; // types need no example
      values++;
      const declaration = target.declarations![0];
      const documented = ts.isVariableDeclaration(declaration) ? declaration.parent.parent : declaration;
      if (!ts.getJSDocTags(documented).some((tag) => tag.tagName.text === "example")) {
        missing.push(`${exported.name} (${relative(ROOT, declaration.getSourceFile().fileName)})`);
      }
    }
    expect(missing).toEqual([]);
    expect(values).toBeGreaterThan(50);
    expect(cases.length).toBeGreaterThan(40);
  });

  // Bounded by the test's own time only: deno's exit is the evidence, and on a busy machine a check of every
  // example took over 50 s (a fixed bound of 50 s failed there with nothing wrong).
  it("type-check with Deno", { timeout: 300_000 }, async () => {
    const dir = join(scratch, "check");
    mkdirSync(dir);
    const files = cases.map(([name, code]) => {
      const file = join(dir, `${name.replace(/[^\w]/g, "_")}.ts`);
      writeFileSync(file, `${code}\nexport {};\n`);
      return file;
    });
    const run = await new Promise<Run>((done) => {
      execFile(DENO, ["check", "--quiet", "--config", join(ROOT, "deno.json"), ...files], { cwd: ROOT, env: { ...process.env, NO_COLOR: "1" }, maxBuffer: 4 << 20 }, (error, stdout, stderr) => {
        done({ code: error ? (typeof error.code === "number" ? error.code : null) : 0, stdout, stderr });
      });
    });
    expect(run.code, run.stdout + run.stderr).toBe(0);
  });

  it.concurrent.each(cases)("%s runs", async (name, code) => {
    const slug = name.replace(/[^\w]/g, "_");
    const file = join(scratch, `${slug}.ts`);
    writeFileSync(file, `${code}\nexport {};\n`);
    // Its own temp dir (os.tmpdir() honours TMPDIR), so whatever it leaves behind is seen. Named short: a storage
    // made in it holds a unix socket, whose whole path must fit in 107 bytes.
    const tmp = join(scratch, `t${cases.findIndex(([n]) => n === name)}`);
    mkdirSync(tmp);
    const marker = `OUTLIVE_EXAMPLE=${slug}`;
    const run = await runDeno(file, tmp, { ...process.env, TMPDIR: tmp, OUTLIVE_EXAMPLE: slug, NO_COLOR: "1" });

    let left = processesWith(marker);
    for (let i = 0; i < 40 && left.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      left = processesWith(marker);
    }
    for (const pid of left) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // ended meanwhile
      }
    }

    expect(run.code, `${name}\n--- code ---\n${code}\n--- stdout ---\n${run.stdout}\n--- stderr ---\n${run.stderr}`).toBe(0);
    expect(left, `${name} left processes running`).toEqual([]);
    expect(readdirSync(tmp), `${name} left files in its temp dir`).toEqual([]);
  });
});
