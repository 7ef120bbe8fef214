/**
 * A real systemd container for harness scenarios: nspawn on machines with no
 * container engine, docker/podman where they really run the image.
 *
 * @example
 * ```ts
 * import { bootContainer } from "./mod.ts";
 * const c = await bootContainer({ suite: "trixie" });
 * try {
 *   const r = await c.exec(["systemd-run", "--user", "--scope", "true"], { user: true, timeoutMs: 10_000 });
 *   console.log(r.exitCode);
 * } finally {
 *   await c.teardown();
 * }
 * ```
 */
export { bootContainer, attachContainer, stderrLog, stopBooting } from "./boot.ts";
export { ContainerHandle, type ContainerInfo, type ExecOptions, type ExecResult, type JournalOptions, type StartOptions } from "./handle.ts";
export type { Machine, TeardownReport, EnterOptions } from "./machine.ts";
export { ContainerError, describeFailure, EXIT_CANNOT_RUN_HERE, type ContainerErrorCode } from "./errors.ts";
export { DEFAULTS, SUITE_SPECS, SUITES, resolveOptions, suiteEngineMismatch, type Bind, type ContainerOptions, type Suite, type EngineChoice } from "./options.ts";
export { AUTO_ORDER, ENGINE_FACTS, ENGINE_NAMES, ENGINES, type EngineName } from "./engines.ts";
export { ensureRootfs, type CachedRootfs } from "./image/rootfs.ts";
export type { Readiness } from "./readiness.ts";
export { findHostCgroups, type HostCgroups } from "./host-checks/host-cgroup.ts";
export { runtimeDir } from "./systemd-run.ts";
export { cannotRunHereReason } from "./host-checks/preflight.ts";
