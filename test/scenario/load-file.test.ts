import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

// loadScenarioFile in a plain Node process (vitest would transform the .ts itself and prove nothing).
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const run = promisify(execFile);

/** `boundMs` short only for the import that hangs: a busy machine took over 3 s to import the others (the default is 20 s). */
async function load(file: string, boundMs?: number): Promise<{ ok: boolean; out: string }> {
  const code = `import { loadScenarioFile } from ${JSON.stringify(join(ROOT, "dist/harness/shared/load-file.js"))};
    loadScenarioFile(${JSON.stringify(file)}${boundMs === undefined ? "" : `, ${boundMs}`}).then((l) => console.log(JSON.stringify(l.map((s) => [s.name, s.summary]))), (e) => { console.log(e.message); process.exit(1); });`;
  return run(process.execPath, ["--input-type=module", "-e", code]).then((r) => ({ ok: true, out: r.stdout.trim() }), (e) => ({ ok: false, out: `${e.stdout}`.trim() }));
}

describe("loadScenarioFile on Node", () => {
  it("loads TypeScript with no build step: types stripped, extensionless imports found, arrays of scenarios", async () => {
    const r = await load(join(ROOT, "test/scenario/fixtures/ts-file/typed.ts"));
    expect(r).toEqual({ ok: true, out: JSON.stringify([["typed-a", "n = 42"], ["typed-b", "second"]]) });
  });

  it("says in one line what is wrong with a file", async () => {
    const f = (name: string) => join(ROOT, "test/scenario/fixtures", name);
    expect(await load(f("nope.ts"))).toEqual({ ok: false, out: `${f("nope.ts")}: no such file` });
    expect(await load(f("no-export.ts"))).toEqual({ ok: false, out: `${f("no-export.ts")}: exports no scenario (expected \`export default defineScenario({ … })\`)` });
    expect(await load(f("throws.ts"))).toEqual({ ok: false, out: `${f("throws.ts")}: threw at import: boom at import` });
    expect(await load(f("ts-file"))).toEqual({ ok: false, out: `${f("ts-file")}: not a file` });
    expect(await load(f("import-hangs.ts"), 3000)).toEqual({ ok: false, out: `${f("import-hangs.ts")}: its import did not finish within 3000 ms` });
  });
});
