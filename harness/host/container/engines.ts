import { hostEngine } from "./engine/host/host.ts";
import { nspawnEngine } from "./engine/nspawn/nspawn.ts";
import { dockerEngine, podmanEngine } from "./engine/oci/oci.ts";
import { vmEngine } from "./engine/vm/vm.ts";
import type { EngineName } from "./engine-names.ts";
import type { Engine } from "./machine.ts";

export { AUTO_ORDER, ENGINE_FACTS, ENGINE_NAMES, type EngineName, engineFacts, isEngineName } from "./engine-names.ts";

/**
 * Every engine, by its name (engine-names.ts), each filling `Engine` in a
 * folder of its own under engine/. Only what boots or attaches a machine
 * imports this registry: the names and facts are a leaf of their own.
 *
 * @example
 * ```ts
 * import { ENGINE_NAMES, ENGINES } from "./engines.ts";
 * for (const name of ENGINE_NAMES) console.log(name, typeof ENGINES[name].boot);
 * ```
 */
export const ENGINES: Record<EngineName, Engine> = {
  nspawn: nspawnEngine,
  podman: podmanEngine,
  docker: dockerEngine,
  host: hostEngine,
  vm: vmEngine,
};
