import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ScenarioContext } from "../../harness/inside/context.ts";
import type { DelegatedCgroup } from "../../harness/inside/delegated-cgroup.ts";
import { defineScenario } from "../../harness/inside/define-scenario.ts";

const scenario = defineScenario({ name: "ready-bound", summary: "reads the daemon's bound on ready", async inside() {} });
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A context as the driver makes one, with the params the host passed (a vm under TCG passes timeScale 5). */
function contextWith(params: Record<string, string>): ScenarioContext {
  const root = mkdtempSync(join(tmpdir(), "outlive-ctx-"));
  dirs.push(root);
  writeFileSync(join(root, "cgroup.procs"), "");
  return new ScenarioContext({ scenario, runDir: join(root, "run"), prefix: "rb", cgroup: { dir: root } as DelegatedCgroup, systemd: 252, params });
}

describe("ctx.daemon(): the module's bound on ready follows the run's time scale", () => {
  it("is 20 s on a machine at a container's pace, five times that under TCG's scale of 5", () => {
    expect(contextWith({}).daemon().sim.options.readyTimeoutMs).toBe(20_000);
    expect(contextWith({ timeScale: "5" }).daemon().sim.options.readyTimeoutMs).toBe(100_000);
  });

  it("a bound the scenario gives is kept as given", () => {
    expect(contextWith({ timeScale: "5" }).daemon({ readyTimeoutMs: 120_000 }).sim.options.readyTimeoutMs).toBe(120_000);
  });

  it("a time scale that is not a number is refused by name", () => {
    expect(() => contextWith({ timeScale: "fast" }).daemon()).toThrow("Expected the `timeScale` param to be a number from 1 to 50, got \"fast\"");
  });
});
