/**
 * The engines by the name `--engine` takes, and what each is in plain facts:
 * whether `auto` tries it, whether it boots the suite asked for, its own
 * boot bound. A leaf: the options, the state and the machine seam need the
 * names, and every engine imports those, so the names cannot live with the
 * engines (engines.ts) without closing an import cycle through them.
 * `auto` tries nspawn first, because it gives pure cgroup v2 inside on any
 * host layout, where podman and docker give the host's; `host` and `vm` are
 * never picked by `auto`. A new engine is one line here, one in engines.ts
 * and a folder of its own under engine/.
 *
 * @example
 * ```ts
 * import { AUTO_ORDER, ENGINE_FACTS, ENGINE_NAMES } from "./engine-names.ts";
 * console.log(ENGINE_NAMES.join(" "), "| auto tries:", AUTO_ORDER.join(" "));
 * console.log(ENGINE_FACTS.vm.bootTimeoutMs); // 240000
 * ```
 */
export const ENGINE_FACTS = {
  nspawn: { auto: true, bootsSuite: true },
  podman: { auto: true, bootsSuite: true },
  docker: { auto: true, bootsSuite: true },
  /** This machine's own systemd: scenarios run once, on whatever version it has. */
  host: { auto: false, bootsSuite: false },
  /** Debian under TCG on two shared cores takes 30–60 s to a ready user manager. */
  vm: { auto: false, bootsSuite: true, bootTimeoutMs: 240_000 },
} as const satisfies Record<string, EngineFacts>;

export interface EngineFacts {
  /** `auto` tries the engines that say true, in the order of ENGINE_FACTS. */
  readonly auto: boolean;
  /**
   * It boots the Debian suite asked for (`suite`, and so a systemd
   * version). False for an engine whose systemd is already there (the
   * host's own): scenarios then run once, on whatever version it has.
   */
  readonly bootsSuite: boolean;
  /** Its own default for `bootTimeoutMs`, when a boot takes longer than the usual 60 s (a VM under software emulation). */
  readonly bootTimeoutMs?: number;
}

export type EngineName = keyof typeof ENGINE_FACTS;

/** The names, in the table's order. */
export const ENGINE_NAMES = Object.keys(ENGINE_FACTS) as EngineName[];

/** The engines `auto` tries, in order. */
export const AUTO_ORDER: readonly EngineName[] = ENGINE_NAMES.filter((name) => ENGINE_FACTS[name].auto);

/** The facts of `name`, typed for a lookup by any engine's name. */
export function engineFacts(name: EngineName): EngineFacts {
  return ENGINE_FACTS[name];
}

export function isEngineName(name: unknown): name is EngineName {
  return typeof name === "string" && Object.hasOwn(ENGINE_FACTS, name);
}
