import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

// The layering rules of .dependency-cruiser.cjs, checked by dependency-cruiser itself (a tool made for it):
// no import cycles, type-only imports included, and no layer that points up. The second part plants a
// violation of each rule in a scratch tree and checks the tool names it, so the config cannot silently
// stop checking (a path that no longer matches anything would pass every tree).
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DEPCRUISE = join(ROOT, "node_modules/.bin/depcruise");

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

function cruise(cwd: string, dirs: string[]): Promise<{ violations: Violation[]; modules: number }> {
  return new Promise((resolve, reject) => {
    execFile(DEPCRUISE, ["--config", ".dependency-cruiser.cjs", "--output-type", "json", ...dirs], { cwd, maxBuffer: 256 << 20, timeout: 120_000 }, (error, stdout, stderr) => {
      // It exits non-zero when it finds violations; the JSON still says which.
      try {
        const out = JSON.parse(stdout);
        resolve({ violations: out.summary.violations, modules: out.modules.length });
      } catch {
        reject(error ?? new Error(`depcruise printed no JSON: ${stderr}`));
      }
    });
  });
}

describe("the layering rules", () => {
  it("hold for lib/, harness/, scripts/ and bench/: no cycle, no layer that points up", async () => {
    const { violations, modules } = await cruise(ROOT, ["lib", "harness", "scripts", "bench"]);
    expect(modules).toBeGreaterThan(300);
    expect(violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`)).toEqual([]);
  }, 180_000);

  describe("the check itself", () => {
    const scratch = mkdtempSync(join(tmpdir(), "outlive-layers-"));
    afterAll(() => rmSync(scratch, { recursive: true, force: true }));
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(scratch, path)), { recursive: true });
      writeFileSync(join(scratch, path), text);
    };

    it("names each planted violation by its rule", async () => {
      copyFileSync(join(ROOT, ".dependency-cruiser.cjs"), join(scratch, ".dependency-cruiser.cjs"));
      copyFileSync(join(ROOT, "tsconfig.json"), join(scratch, "tsconfig.json"));
      // A cycle closed only by a type-only import.
      write("lib/a/one.ts", 'import type { Two } from "./two.ts";\nexport interface One { two?: Two }\n');
      write("lib/a/two.ts", 'import type { One } from "./one.ts";\nexport interface Two { one?: One }\n');
      write("lib/store/up.ts", 'import type { S } from "../supervisor/s.ts";\nexport type Up = S;\n');
      write("lib/supervisor/s.ts", 'import { r } from "../rpc/r.ts";\nexport type S = typeof r;\n');
      write("lib/rpc/r.ts", 'import type { T } from "../spawn/t.ts";\nexport const r = 1 as unknown as T;\n');
      write("lib/spawn/t.ts", "export type T = number;\n");
      write("lib/control/c.ts", 'import type { S } from "../supervisor/s.ts";\nexport type C = S;\n');
      write("lib/placement/p.ts", 'import type { W } from "../spawner/w.ts";\nexport type P = W;\n');
      write("lib/spawner/w.ts", "export type W = string;\n");
      write("lib/mark.ts", 'import { h } from "../harness/host/h.ts";\nexport const mark = h;\n');
      write("harness/host/h.ts", "export const h = 1;\n");
      write("harness/shared/define.ts", 'import type { I } from "../inside/i.ts";\nexport type D = I;\n');
      write("harness/inside/i.ts", 'import { h } from "../host/h.ts";\nexport type I = typeof h;\n');
      write("harness/inside/later.ts", 'export const later = () => import("../host/h.ts");\n');
      write("harness/host/container/engine/vm/vm.ts", 'import { n } from "../nspawn/nspawn.ts";\nexport const v = n;\n');
      write("harness/host/container/engine/nspawn/nspawn.ts", "export const n = 1;\n");
      const { violations } = await cruise(scratch, ["lib", "harness"]);
      const found = violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
      expect(found).toEqual(expect.arrayContaining([
        "no-cycles: lib/a/one.ts → lib/a/two.ts",
        "lower-layers-never-import-higher: lib/store/up.ts → lib/supervisor/s.ts",
        "transport-below-everything: lib/rpc/r.ts → lib/spawn/t.ts",
        "control-channel-calls-through-its-interface: lib/control/c.ts → lib/supervisor/s.ts",
        "placements-are-not-the-spawner: lib/placement/p.ts → lib/spawner/w.ts",
        "lib-is-the-library: lib/mark.ts → harness/host/h.ts",
        "harness-shared-is-neither-side: harness/shared/define.ts → harness/inside/i.ts",
        "inside-never-imports-the-host: harness/inside/i.ts → harness/host/h.ts",
        "one-way-in: harness/inside/later.ts → harness/host/h.ts",
        "engines-each-on-their-own: harness/host/container/engine/vm/vm.ts → harness/host/container/engine/nspawn/nspawn.ts",
      ]));
    }, 180_000);
  });
});
