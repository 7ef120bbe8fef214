import type { ScenarioContext } from "../inside/context.ts";
import type { HostPreparation } from "./host-preparation.ts";

/**
 * One scenario: what runs inside the container (as the user `outlive`,
 * under its user manager, in a delegated cgroup) and how long it may take.
 * The host side is the same for every scenario (`harness/host/run-in.ts`):
 * boot, run the driver (which judges), read its report, write the report
 * files.
 */
export interface Scenario {
  /** Also the report directory's name: `harness/reports/<name>-<suite>/`. */
  name: string;
  /** One line: what it shows. */
  summary: string;
  /** The module's runtime. Default `node`. */
  runtime?: "node" | "deno";
  /** Bound on the whole scenario inside the container. Default 90 000 ms. */
  timeoutMs?: number;
  /**
   * Storages on a tmpfs of their own, by label → size (`{ full: "8m" }`):
   * mounted by the host side as root inside the container at the path
   * `ctx.storageFor(label)` returns, owned by the container's user, and
   * unmounted when the driver ends. For scenarios of a full disk.
   */
  tmpfsStorages?: Record<string, string>;
  /**
   * Set while the scenario shows an open bug (a line, a link): its checks
   * still say what SHOULD happen, a failed one gives the verdict
   * `reproduced`, and all of them holding fails the run ("the bug no longer
   * shows"). Once the bug is fixed, delete this line: the same scenario is
   * then a regression test that passes.
   */
  bug?: string;
  /**
   * What the host makes before the steps, by name (see host-preparation.ts:
   * the containers have no compilers, so a foreign module in Rust is built
   * on the host). Where one cannot be made here, the scenario is skipped
   * with the reason. Default none.
   */
  prepareOnHost?: HostPreparation[];
  /** The steps, inside the container. Record checks with `ctx.check`, skip with `ctx.skip`. */
  inside(ctx: ScenarioContext): Promise<void>;
}

export const DEFAULT_SCENARIO_TIMEOUT_MS = 90_000;

/**
 * Declares a scenario; the identity function, there for the type and the
 * defaults in one place.
 *
 * @example
 * ```ts
 * import { defineScenario } from "outlive/harness";
 * export default defineScenario({
 *   name: "hello",
 *   summary: "a task's exit code survives",
 *   async inside(ctx) {
 *     const d = ctx.daemon();
 *     await d.start();
 *     const t = await d.run({ shell: "exit 3" });
 *     const done = await ctx.completion(d, t.id);
 *     ctx.check("exit code 3", done.exitCode === 3, done);
 *   },
 * });
 * ```
 */
export function defineScenario(scenario: Scenario): Scenario {
  return scenario;
}

export { ScenarioSkip } from "./skip.ts";
