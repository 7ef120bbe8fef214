import type { Scenario } from "./define.ts";

/**
 * Every scenario, in the order `npm run scenarios` runs them. Each lives in
 * `harness/cases/<name>.ts` and default-exports its `Scenario`.
 */
export const SCENARIO_NAMES = [
  "restart-adopt",
  "restart-adopt-deno",
  "restart-unscoped",
  "finished-while-down",
  "kill-escapees",
  "backstop",
  "startup-cleanup",
  "arguments",
  "stop-ends-tasks",
  "memory-cap",
  "limits",
  "respawn-race",
  "census-dev-server",
  "census-setsid-child",
  "census-adopted",
  "census-fail-closed",
  "census-mcp-servers",
  "census-real-mcp",
  "kill-during-restart",
  "pty-restart",
  "full-storage",
  "follow-restart",
  "sidecar-rust",
  "host-reboot",
  "host-reboot-clean",
  "soak",
] as const;

/**
 * Run by name only (`npm run scenario -- NAME`), not in the default set:
 * long runs (`soak-long`, `soak-power`: power cuts under `--engine vm`), and the soak's cgroup-v2 variants. A reproduction of an open bug may sit in the
 * default set: it declares `bug` and its verdict is `reproduced` (not a
 * failure) until the fix makes its checks hold; then `bug` is deleted.
 */
export const ON_DEMAND_NAMES = ["soak-long", "soak-cgroup-v2", "soak-long-cgroup-v2", "soak-power"] as const;

export type ScenarioName = (typeof SCENARIO_NAMES)[number] | (typeof ON_DEMAND_NAMES)[number];

export function isScenarioName(name: string): name is ScenarioName {
  return ([...SCENARIO_NAMES, ...ON_DEMAND_NAMES] as readonly string[]).includes(name);
}

/** Imports `harness/cases/<name>` (from dist/ or from source, whichever this file runs from). */
export async function loadScenario(name: string): Promise<Scenario> {
  if (!isScenarioName(name)) throw new Error(`no scenario ${JSON.stringify(name)}; known: ${SCENARIO_NAMES.join(", ")}`);
  const ext = import.meta.url.endsWith(".ts") ? "ts" : "js";
  const mod = await import(new URL(`../cases/${name}.${ext}`, import.meta.url).href);
  return mod.default as Scenario;
}
