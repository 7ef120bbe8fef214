/**
 * Why a supervisor is being drained, as its daemon says (field notes §1):
 * `restart` and `reload` keep the tasks running for the next incarnation to
 * adopt; `disable` and `shutdown` end them. A leaf: the supervisor, the
 * control channel and the session all speak it, and none imports another
 * for it.
 */
export type DrainReason = "restart" | "reload" | "disable" | "shutdown";

/**
 * Every drain reason, in the order the docs list them.
 *
 * @example
 * ```ts
 * import { DRAIN_REASONS } from "./drain-reason.ts";
 * console.log(DRAIN_REASONS.includes("restart")); // true
 * ```
 */
export const DRAIN_REASONS: readonly DrainReason[] = ["restart", "reload", "disable", "shutdown"];
