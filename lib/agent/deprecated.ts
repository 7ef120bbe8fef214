/**
 * The agent side's old names, from when it was called "the harness" (a
 * word that now means only the test harness: `outlive/harness`,
 * `outlive scenario`). Each is the new one under its old name, for one
 * release: all are removed in the next.
 *
 * @module
 */
import { agentLeader, type AgentLeader } from "./agent-leader.ts";
import { launchAgent, type AgentSpec, type LaunchedAgent } from "./launch-agent.ts";
import { mayRetireAgent, retireIdleAgent, type AgentIdleDecision, type AgentRetireOptions } from "./retire-agent.ts";

/**
 * @deprecated Use {@link launchAgent}, the same function (and `agent` for the spec's `harness`); `launchHarness` is removed in the next release.
 *
 * @example
 * ```ts
 * import { launchAgent } from "./launch-agent.ts";
 * import { launchHarness } from "./deprecated.ts";
 * console.log(launchHarness === launchAgent); // true
 * ```
 */
export const launchHarness: typeof launchAgent = launchAgent;

/**
 * @deprecated Use {@link mayRetireAgent}, the same function; `mayRetireHarness` is removed in the next release.
 *
 * @example
 * ```ts
 * import { mayRetireAgent } from "./retire-agent.ts";
 * import { mayRetireHarness } from "./deprecated.ts";
 * console.log(mayRetireHarness === mayRetireAgent); // true
 * ```
 */
export const mayRetireHarness: typeof mayRetireAgent = mayRetireAgent;

/**
 * @deprecated Use {@link retireIdleAgent}, the same function; `retireIdleHarness` is removed in the next release.
 *
 * @example
 * ```ts
 * import { retireIdleAgent } from "./retire-agent.ts";
 * import { retireIdleHarness } from "./deprecated.ts";
 * console.log(retireIdleHarness === retireIdleAgent); // true
 * ```
 */
export const retireIdleHarness: typeof retireIdleAgent = retireIdleAgent;

/**
 * @deprecated Use {@link agentLeader}, the same function; `harnessLeader` is removed in the next release.
 *
 * @example
 * ```ts
 * import { agentLeader } from "./agent-leader.ts";
 * import { harnessLeader } from "./deprecated.ts";
 * console.log(harnessLeader === agentLeader); // true
 * ```
 */
export const harnessLeader: typeof agentLeader = agentLeader;

/** @deprecated Use {@link AgentSpec} (its `agent` for `harness`); `HarnessSpec` is removed in the next release. */
export type HarnessSpec = AgentSpec;
/** @deprecated Use {@link LaunchedAgent}; `LaunchedHarness` is removed in the next release. */
export type LaunchedHarness = LaunchedAgent;
/** @deprecated Use {@link AgentIdleDecision}; `HarnessIdleDecision` is removed in the next release. */
export type HarnessIdleDecision = AgentIdleDecision;
/** @deprecated Use {@link AgentRetireOptions}; `HarnessRetireOptions` is removed in the next release. */
export type HarnessRetireOptions = AgentRetireOptions;
/** @deprecated Use {@link AgentLeader}; `HarnessLeader` is removed in the next release. */
export type HarnessLeader = AgentLeader;
