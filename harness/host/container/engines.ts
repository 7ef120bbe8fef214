import { hostEngine } from "./host.ts";
import type { Engine } from "./machine.ts";
import { nspawnEngine } from "./nspawn.ts";
import { dockerEngine, podmanEngine } from "./oci.ts";
import { vmEngine } from "./vm.ts";

/**
 * Every engine, by the name `--engine` takes, each filling `Engine` in its
 * own file. `auto` tries those marked `auto` in this order: nspawn first,
 * because it gives pure cgroup v2 inside on any host layout, where podman
 * and docker give the host's; `host` and `vm` are never picked by `auto`.
 * A new engine is one line here and a file of its own.
 *
 * @example
 * ```ts
 * import { ENGINE_NAMES, ENGINES } from "./engines.ts";
 * for (const name of ENGINE_NAMES) console.log(name, ENGINES[name].auto ? "(auto)" : "");
 * ```
 */
export const ENGINES = {
  nspawn: nspawnEngine,
  podman: podmanEngine,
  docker: dockerEngine,
  host: hostEngine,
  vm: vmEngine,
} as const satisfies Record<string, Engine>;

export type EngineName = keyof typeof ENGINES;

/** The names, in the table's order. */
export const ENGINE_NAMES = Object.keys(ENGINES) as EngineName[];

/** The engines `auto` tries, in order. */
export const AUTO_ORDER: readonly EngineName[] = ENGINE_NAMES.filter((name) => ENGINES[name].auto);

export function isEngineName(name: unknown): name is EngineName {
  return typeof name === "string" && Object.hasOwn(ENGINES, name);
}
