import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, expect, test } from "vitest";

const MOD = join(import.meta.dirname, "..", "..", "dist", "lib", "mod.js");
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A library user's program in its own process: open, run a task to its end, close; with `log` or without. */
async function program(withLog: boolean): Promise<{ stdout: string; stderr: string }> {
  const storage = mkdtempSync(join(tmpdir(), "outlive-log-option-"));
  dirs.push(storage);
  const source = `
    const { Supervisor } = await import(${JSON.stringify(MOD)});
    const sup = await Supervisor.open({ storage: ${JSON.stringify(storage)}, control: false${withLog ? ", log: (line) => console.log('LOG ' + line)" : ""} });
    const task = await sup.run({ argv: ["true"] });
    await sup.wait(task.id);
    await sup.close();
  `;
  return promisify(execFile)(process.execPath, ["--input-type=module", "-e", source], { timeout: 30_000 });
}

test("the library writes nothing to stderr unless given a log", async () => {
  const quiet = await program(false);
  expect(quiet.stderr).toBe("");
  expect(quiet.stdout).toBe("");
});

test("with a log, the notices go to it, not to stderr", async () => {
  const told = await program(true);
  expect(told.stderr).toBe("");
  expect(told.stdout).toMatch(/^LOG placement process-group/m);
});
