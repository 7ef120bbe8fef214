import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ContainerError } from "./errors.ts";
import { ContainerHandle } from "./handle.ts";
import { AUTO_ORDER, ENGINES, type EngineName } from "./engines.ts";
import type { Machine } from "./machine.ts";
import { consoleLogPath } from "./engine/nspawn/nspawn.ts";
import { resolveOptions, type ContainerOptions, type ResolvedOptions } from "./options.ts";
import { waitUntilReady } from "./readiness.ts";
import type { Log } from "./image/rootfs.ts";
import { loadState, saveState, type ContainerState } from "./state.ts";

/** Progress goes to stderr so a scenario's stdout stays its own. */
export const stderrLog: Log = (line) => process.stderr.write(`container: ${line}\n`);

/**
 * Boots a systemd container and waits (bounded) until systemd and the
 * lingering user's manager run. Says which engine it chose and why the
 * others were passed over.
 *
 * @example
 * ```ts
 * import { bootContainer } from "./boot.ts";
 * const c = await bootContainer({ suite: "bookworm" });
 * try {
 *   console.log((await c.exec(["systemctl", "--version"])).stdout);
 * } finally {
 *   await c.teardown();
 * }
 * ```
 */
export async function bootContainer(options: ContainerOptions = {}, log: Log = stderrLog): Promise<ContainerHandle> {
  const resolved = resolveOptions(options);
  const order = resolved.engine === "auto" ? AUTO_ORDER : [resolved.engine];
  const passedOver: string[] = [];
  let first: ContainerError | null = null;
  for (const engine of order) {
    const isLast = engine === order[order.length - 1];
    try {
      const handle = await bootWith(engine, resolved, log);
      const why = passedOver.length > 0 ? ` (${passedOver.join("; ")})` : "";
      log(`engine: ${engine}${why}`);
      const r = handle.info.readiness;
      log(
        `${resolved.name}: ${handle.info.suite}, systemd ${r.systemdVersion}, ${r.systemState} after ${r.ms} ms, ` +
          `cgroup ${handle.info.unified ? "v2 only (unified)" : "hybrid (v1 + v2)"}` +
          (r.failedUnits.length > 0 ? `, failed units: ${r.failedUnits.join(" ")}` : ""),
      );
      return handle;
    } catch (error) {
      if (!(error instanceof ContainerError) || !error.cannotRunHere) throw error;
      first ??= error;
      if (isLast && passedOver.length === 0) throw error;
      passedOver.push(`${engine}: ${error.message}`);
      // The first engine's reason leads (for `auto` the preferred one, e.g. "needs root"); the others follow.
      if (isLast) throw new ContainerError(first.code, `${first.message} (also tried ${passedOver.slice(1).join("; ")})`, first.kept);
    }
  }
  throw new ContainerError("no-engine", "no engine to try");
}

/**
 * Stops what a boot under way (in this process, with these options) has
 * started so far, for a signal that comes before `bootContainer` returned a
 * handle to tear down. Each engine saves its state before anything can fail,
 * so the machine is found by its name; with no state saved yet nothing was
 * started. The options must carry the name the boot uses (resolve it first).
 */
export async function stopBooting(options: ContainerOptions & { name: string }, timeoutMs = 15_000): Promise<void> {
  const resolved = resolveOptions(options);
  let state: ContainerState;
  try {
    state = loadState(resolved.cacheDir, resolved.name);
  } catch {
    return;
  }
  await machineFromState(state).stop(timeoutMs);
}

async function bootWith(engine: EngineName, options: ResolvedOptions, log: Log): Promise<ContainerHandle> {
  const { machine, launchedAt } = await ENGINES[engine].boot(options, log);
  return await whenReady(machine, options, launchedAt);
}

/** Waits for readiness; a container that does not get there keeps its journal and is stopped. */
async function whenReady(machine: Machine, options: ResolvedOptions, launchedAt: number): Promise<ContainerHandle> {
  try {
    const readiness = await waitUntilReady(machine, options.uid, options.bootTimeoutMs, launchedAt);
    const state = { ...loadState(options.cacheDir, options.name), readiness } as ContainerState;
    saveState(state);
    return new ContainerHandle(machine, { ...state, readiness });
  } catch (error) {
    const kept = await keepBootEvidence(machine, options);
    const report = await machine.stop(options.stopTimeoutMs);
    if (error instanceof ContainerError) {
      error.kept.push(...kept);
      if (!report.clean) error.kept.push(`leftovers: ${report.leftovers.join(", ")}`);
    }
    throw error;
  }
}

async function keepBootEvidence(machine: Machine, options: ResolvedOptions): Promise<string[]> {
  const kept: string[] = [];
  const journal = await machine.enter(["journalctl", "--boot", "--no-pager", "--output=short-precise"], { timeoutMs: 20_000 });
  if (journal.exitCode === 0 && journal.stdout) {
    const path = join(options.runDir, "journal.txt");
    writeFileSync(path, journal.stdout);
    kept.push(path);
  }
  if (existsSync(consoleLogPath(options.runDir))) kept.push(consoleLogPath(options.runDir));
  return kept;
}

/** A machine object for a container another process started (CLI `exec`/`down`). */
export function machineFromState(state: ContainerState): Machine {
  return ENGINES[state.engine].attach(state);
}

/**
 * Finds a container booted by another process (e.g. `cli.js up`) by name.
 *
 * @example
 * ```ts
 * import { attachContainer } from "./boot.ts";
 * const c = attachContainer("outlive-bookworm-1");
 * console.log((await c.exec(["true"])).exitCode);
 * ```
 */
export function attachContainer(name: string, options: Pick<ContainerOptions, "cacheDir" | "projectDir"> = {}): ContainerHandle {
  const resolved = resolveOptions({ ...options, name });
  const state = loadState(resolved.cacheDir, name);
  if (!state.readiness) throw new ContainerError("not-running", `container ${name} never became ready`);
  return new ContainerHandle(machineFromState(state), { ...state, readiness: state.readiness });
}
