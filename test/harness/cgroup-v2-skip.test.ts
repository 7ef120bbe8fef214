import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ScenarioContext } from "../../harness/inside/context.ts";
import type { DelegatedCgroup } from "../../harness/inside/delegated-cgroup.ts";
import { defineScenario } from "../../harness/inside/define-scenario.ts";
import { ScenarioSkip } from "../../harness/shared/skip.ts";

const scenario = defineScenario({ name: "asks-cgroup-v2", summary: "asks for the cgroup-v2 placement", async inside() {} });
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A context whose delegated cgroup is a directory shaped like one on a 5.10 kernel (no cgroup.kill), or a newer one. */
function contextWith(hasKill: boolean): ScenarioContext {
  const root = mkdtempSync(join(tmpdir(), "outlive-ctx-"));
  dirs.push(root);
  writeFileSync(join(root, "cgroup.procs"), "");
  if (hasKill) writeFileSync(join(root, "cgroup.kill"), "");
  return new ScenarioContext({ scenario, runDir: join(root, "run"), prefix: "sk", cgroup: { dir: root } as DelegatedCgroup, systemd: 252 });
}

describe("a scenario that asks for cgroup-v2 where the kernel has no cgroup.kill", () => {
  it("skips with the reason read from the cgroup fs", () => {
    const error = (() => {
      try {
        contextWith(false).daemon({ placement: "cgroup-v2" });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ScenarioSkip);
    expect((error as ScenarioSkip).reason).toMatch(/^this scenario asks for the cgroup-v2 placement, which is refused here: no cgroup\.kill in .*older than Linux 5\.14/);
  });
  it("does not skip where cgroup.kill is there, nor for the other placements", () => {
    expect(() => contextWith(true).daemon({ placement: "cgroup-v2" })).not.toThrow();
    expect(() => contextWith(false).daemon({ placement: "systemd-scope" })).not.toThrow();
  });
});
