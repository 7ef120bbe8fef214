import { projectRoot } from "../../../shared/project-root.ts";
import { AUTO_ORDER, ENGINES, type EngineName } from "../engines.ts";
import { DEFAULTS, type EngineChoice } from "../options.ts";

/** Why one engine cannot boot here, or null. Cheap: boots nothing (debootstrap's network is only found out by trying). */
export async function engineMissing(engine: EngineName, nodePath: string = DEFAULTS.nodePath, projectDir = projectRoot()): Promise<string | null> {
  return await ENGINES[engine].missing(nodePath, projectDir);
}

/**
 * Why a container cannot be booted here with this engine choice, or null
 * when it probably can: for tests and scenarios to skip with the reason
 * printed instead of failing. `auto` needs any one of the engines it tries.
 *
 * @example
 * ```ts
 * import { cannotRunHereReason } from "./preflight.ts";
 * const why = await cannotRunHereReason();
 * if (why) console.log(`skipped: ${why}`);
 * ```
 */
export async function cannotRunHereReason(nodePath: string = DEFAULTS.nodePath, engine: EngineChoice = "auto"): Promise<string | null> {
  if (engine !== "auto") return await engineMissing(engine, nodePath);
  const reasons: string[] = [];
  for (const candidate of AUTO_ORDER) {
    const why = await engineMissing(candidate, nodePath);
    if (why === null) return null;
    reasons.push(`${candidate}: ${why}`);
    // Without root none of them can run: one reason is enough.
    if (why.startsWith("needs root")) return why;
  }
  return reasons.join("; ");
}
