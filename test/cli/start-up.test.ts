import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { writeModuleRecorder } from "../support/module-recorder.ts";

// A command loads only what it uses: `outlive --help` and `outlive ps` never load the TypeScript
// compiler, the TOML parser, the census or the scenario harness. Every module the process resolves
// is recorded by a resolve hook given with --import, as a user's own Node would load them.
const CLI = join(import.meta.dirname, "..", "..", "dist", "scripts", "outlive.js");
const dir = mkdtempSync(join(tmpdir(), "outlive-start-up-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const recorder = writeModuleRecorder(dir);

/** The CLI with the recorder; returns what it printed and every module URL it resolved. */
async function loaded(name: string, ...args: string[]): Promise<{ out: string; modules: string[] }> {
  return loadedFrom(CLI, name, ...args);
}

async function loadedFrom(entry: string, name: string, ...args: string[]): Promise<{ out: string; modules: string[] }> {
  const list = join(dir, `${name}.txt`);
  writeFileSync(list, "");
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", recorder, entry, ...args], {
    env: { ...process.env, OUTLIVE_TEST_MODULES: list },
    timeout: 30_000,
  });
  return { out: stdout, modules: readFileSync(list, "utf8").split("\n").filter(Boolean) };
}

// The installed `outlive`: the package's bin, which runs the bundle (scripts/bundle-cli.ts) when the build made it.
const BIN = join(import.meta.dirname, "..", "..", "dist", "scripts", "bin.js");
const BUNDLE = join(import.meta.dirname, "..", "..", "dist", "cli", "outlive.js");

const HEAVY = [/\/node_modules\/typescript\//, /\/node_modules\/esbuild\//, /\/node_modules\/smol-toml\//, /\/dist\/lib\/census\//, /\/dist\/harness\//, /\/dist\/lib\/mod\.js$/];

describe("start-up", () => {
  it("outlive --help loads no command module, no compiler, no TOML parser", async () => {
    const { out, modules } = await loaded("help", "--help");
    expect(out).toContain("usage: outlive COMMAND");
    expect(modules.some((m) => m.endsWith("/dist/scripts/outlive.js"))).toBe(true);
    expect(modules.filter((m) => /\/dist\/scripts\/commands\//.test(m))).toEqual([]);
    for (const heavy of HEAVY) expect(modules.filter((m) => heavy.test(m)), String(heavy)).toEqual([]);
  });

  it("outlive ps loads its own command and the store, not the census, the harness or a compiler", async () => {
    const storage = join(dir, "storage");
    // ps never makes a storage: a task run first makes it, so ps has a record to show.
    await promisify(execFile)(process.execPath, [CLI, "run", "--storage", storage, "--", "true"]);
    const { out, modules } = await loaded("ps", "ps", "--storage", storage);
    expect(out).toContain("ID");
    expect(modules.some((m) => m.endsWith("/dist/scripts/commands/ps.js"))).toBe(true);
    expect(modules.filter((m) => /\/dist\/scripts\/commands\//.test(m) && !m.endsWith("/ps.js"))).toEqual([]);
    for (const heavy of HEAVY) expect(modules.filter((m) => heavy.test(m)), String(heavy)).toEqual([]);
  });

  it("the installed outlive runs ps from the bundle: no module of dist/lib or dist/scripts/commands is loaded one by one", async () => {
    expect(existsSync(BUNDLE), `no bundle at ${BUNDLE}: npm run build (and npm test) make it`).toBe(true);
    const storage = join(dir, "storage-bin");
    await promisify(execFile)(process.execPath, [CLI, "run", "--storage", storage, "--", "true"]);
    const { out, modules } = await loadedFrom(BIN, "bin-ps", "ps", "--storage", storage);
    expect(out).toContain("ID");
    expect(modules.some((m) => m.endsWith("/dist/cli/outlive.js"))).toBe(true);
    expect(modules.filter((m) => /\/dist\/(lib|scripts\/commands|scripts\/cli)\//.test(m))).toEqual([]);
    for (const heavy of HEAVY) expect(modules.filter((m) => heavy.test(m)), String(heavy)).toEqual([]);
  });

  it("the installed outlive's wait and logs load neither the census, a compiler nor the TOML parser", async () => {
    const storage = join(dir, "storage-wait");
    const { stdout } = await promisify(execFile)(process.execPath, [CLI, "run", "--storage", storage, "--", "echo", "hi"]);
    const id = stdout.trim();
    for (const command of ["wait", "logs"]) {
      const { out, modules } = await loadedFrom(BIN, `bin-${command}`, command, "--storage", storage, id);
      expect(out.length, command).toBeGreaterThan(0);
      for (const heavy of HEAVY) expect(modules.filter((m) => heavy.test(m)), `${command}: ${heavy}`).toEqual([]);
    }
  });

  it("the installed outlive's scenario command (run unbundled) reports a usage error in one line, exit 2", async () => {
    const r = await promisify(execFile)(process.execPath, [BIN, "scenario", "run", "--bogus"]).then(
      () => ({ code: 0, stderr: "" }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/^outlive scenario: unknown flag --bogus/);
  });
});
