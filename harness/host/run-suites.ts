import { bootContainer, cannotRunHereReason, type ContainerHandle, type ContainerOptions, describeFailure, ENGINE_FACTS, resolveOptions, stopBooting, type Suite } from "./container/mod.ts";
import { type RunInOptions, runScenarioIn, type ScenarioResult } from "./run-in.ts";
import { formatTable } from "../shared/table.ts";
import { TCG_TIME_SCALE, TIME_SCALE_PARAM, timeScaleOf } from "../shared/time-scale.ts";
import type { VmMachine } from "./container/engine/vm/vm.ts";

/** systemd versions the harness ships against, and the Debian suite that has each. */
export const SYSTEMD_SUITES: Record<string, Suite> = { "252": "bookworm", "257": "trixie" };

/** One scenario to run: a registered name, or a scenario of a file (with how to run it). */
export interface RunTarget {
  name: string;
  run?: RunInOptions;
}

export interface SuiteRunOptions {
  /** Registered scenarios by name. */
  names?: string[];
  /** Scenarios of files, after the named ones. */
  targets?: RunTarget[];
  suites: Suite[];
  /** More for every container (binds, engine, cache). Engine `host` runs once, on the host's own systemd, whatever `suites` says. */
  container?: Omit<ContainerOptions, "suite">;
  /**
   * How much slower than a container the machine is, passed to every
   * scenario as the param `timeScale` (see harness/shared/time-scale.ts).
   * Default: 5 for a vm under software emulation (TCG), else none (1).
   */
  timeScale?: number;
  log?: (line: string) => void;
  /** Values for every scenario run (`--cuts`, `--seed`), read inside as `ctx.params`. */
  params?: Record<string, string>;
  /**
   * Boot the suites' containers at once and run their scenarios side by side (default false: one suite after the
   * other). Most of a scenario's time is waiting on the tasks it starts, so two suites take little longer than one.
   */
  sideBySide?: boolean;
}

/**
 * Runs the scenarios on each suite: ONE container per suite, scenarios one
 * after another in it (each with its own storage, prefix and delegated
 * driver unit, all ended after it), then the container is torn down. A
 * machine that cannot boot containers gives every scenario "skip" with the
 * reason; a boot that fails otherwise fails them. With `sideBySide` the
 * suites' containers run at once; the results keep the suites' order.
 */
export async function runSuites(options: SuiteRunOptions): Promise<ScenarioResult[]> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  if (options.timeScale !== undefined) timeScaleOf({ [TIME_SCALE_PARAM]: String(options.timeScale) });
  const engine = options.container?.engine ?? "auto";
  const cannot = await cannotRunHereReason(undefined, engine);
  const targets: RunTarget[] = [...(options.names ?? []).map((name) => ({ name })), ...(options.targets ?? [])];
  // An engine that boots no suite (the host's own systemd) runs once, whatever `suites` says.
  const fixed = engine !== "auto" && !ENGINE_FACTS[engine].bootsSuite ? engine : null;
  const suites: (Suite | "host")[] = fixed ? ["host"] : options.suites;
  // A signal ends what runs, on every suite: the machine booted, or the one still booting (found by the name fixed
  // before its boot). Each suite's run keeps here how to end its own; the process exits once all have ended.
  const enders = new Map<string, () => Promise<unknown>>();
  const stopOnSignal = () => {
    void Promise.allSettled([...enders.values()].map((end) => end())).finally(() => process.exit(130));
  };
  process.once("SIGINT", stopOnSignal);
  process.once("SIGTERM", stopOnSignal);
  try {
    const one = (suite: Suite | "host") => runOneSuite(suite, targets, options, cannot, log, enders);
    if (options.sideBySide) return (await Promise.all(suites.map(one))).flat();
    const results: ScenarioResult[] = [];
    for (const suite of suites) results.push(...(await one(suite)));
    return results;
  } finally {
    process.off("SIGINT", stopOnSignal);
    process.off("SIGTERM", stopOnSignal);
  }
}

/** One suite's part of runSuites: its container, the targets one after another in it, its teardown. */
async function runOneSuite(
  suite: Suite | "host",
  targets: RunTarget[],
  options: SuiteRunOptions,
  cannot: string | null,
  log: (line: string) => void,
  enders: Map<string, () => Promise<unknown>>,
): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  const failAll = (verdict: "skip" | "fail", why: string, left: RunTarget[] = targets) => {
    for (const t of left) results.push(notRun(t, suite, verdict, why));
  };
  if (cannot) {
    log(`skipping every scenario on ${suite}: ${cannot}`);
    failAll("skip", cannot);
    return results;
  }
  let current: ContainerHandle | null = null;
  let booting: (ContainerOptions & { name: string }) | null = null;
  // The last teardown, once begun: a signal during it waits for it instead of starting a second one.
  let lastTeardown: Promise<unknown> | null = null;
  enders.set(suite, () => lastTeardown ?? (current ? current.teardown() : booting ? stopBooting(booting) : Promise.resolve()));
  const boot = async (): Promise<ContainerHandle> => {
    const bootStart = Date.now();
    const bootOptions = suite === "host" ? { ...options.container } : { ...options.container, suite };
    booting = { ...bootOptions, name: resolveOptions(bootOptions).name };
    try {
      current = await bootContainer(booting);
    } finally {
      booting = null;
    }
    log(`${suite}: ${current.info.engine} ${current.info.name} up in ${((Date.now() - bootStart) / 1000).toFixed(1)} s (systemd ${current.info.readiness.systemdVersion})`);
    return current;
  };
  let container: ContainerHandle;
  try {
    container = await boot();
  } catch (error) {
    enders.delete(suite);
    const { line, exitCode } = describeFailure(error);
    log(line);
    failAll(exitCode === 77 ? "skip" : "fail", line);
    return results;
  }
  const scale = options.timeScale ?? machineTimeScale(container);
  let tornDown = false;
  try {
    for (const [i, t] of targets.entries()) {
      // A scenario that left its machine unanswering (a reboot that never came back) fails alone: the next gets a new machine.
      if (i > 0 && !(await answers(container))) {
        const said = (await container.machine.lastWords?.())?.[0];
        log(`${suite}: ${container.info.name} no longer answers${said ? ` (${said})` : ""}; booting a new machine for the scenarios left`);
        const down = await container.teardown();
        current = null;
        if (!down.clean) log(`${suite}: teardown left ${JSON.stringify(down.leftovers)}`);
        try {
          container = await boot();
        } catch (error) {
          const { line } = describeFailure(error);
          log(line);
          failAll("fail", line, targets.slice(i));
          tornDown = true;
          break;
        }
      }
      const params = { ...(scale === 1 ? {} : { [TIME_SCALE_PARAM]: String(scale) }), ...options.params, ...t.run?.params };
      const run = Object.keys(params).length === 0 ? t.run : { ...t.run, params };
      // One scenario that cannot even start fails alone, with one line; the others still run, the container still goes.
      results.push(await runScenarioIn(container, t.name, log, run).catch((error) => {
        const why = `${(error as Error).message ?? error}`.split("\n")[0];
        log(`${t.name} on ${suite}: FAIL (${why})`);
        return notRun(t, suite, "fail", why);
      }));
    }
  } finally {
    const teardown = tornDown ? null : container.teardown();
    lastTeardown = teardown;
    const down = await teardown;
    enders.delete(suite);
    if (down && !down.clean) log(`${suite}: teardown left ${JSON.stringify(down.leftovers)}`);
  }
  return results;
}

/** The result of a target that did not run on a suite (skipped, or failed before its scenario began). */
function notRun(t: RunTarget, suite: string, verdict: "skip" | "fail", why: string): ScenarioResult {
  return { name: t.name, suite, systemd: null, verdict, why, durationMs: 0, reportDir: "", ...(t.run?.file ? { file: t.run.file } : {}) };
}

/** Whether a machine still runs and takes a command, within a bound. */
async function answers(container: ContainerHandle): Promise<boolean> {
  if (!(await container.machine.isAlive())) return false;
  const r = await container.machine.enter(["true"], { timeoutMs: 30_000 }).catch(() => null);
  return r?.exitCode === 0;
}

/** A vm under TCG is the one machine known to be slow; everything else runs at a container's pace. */
function machineTimeScale(container: ContainerHandle): number {
  return container.machine.engine === "vm" && (container.machine as VmMachine).state.accel.accel === "tcg" ? TCG_TIME_SCALE : 1;
}

/** The summary table, one line per scenario and suite, then the counts. */
export function formatSummary(results: ScenarioResult[]): string {
  // Each column as wide as its widest cell: a long scenario name (27 characters and more) keeps the rest aligned.
  const rows = [["scenario", "suite", "systemd", "verdict", "time", "why"]];
  for (const r of results) {
    rows.push([r.name, r.suite, String(r.systemd ?? "-"), r.verdict, `${(r.durationMs / 1000).toFixed(1)}s`, r.why ?? ""]);
  }
  const n = (v: string) => results.filter((r) => r.verdict === v).length;
  return [
    formatTable(rows, { right: [4] }),
    `${n("pass")} passed, ${n("fail")} failed, ${n("skip")} skipped${n("reproduced") ? `, ${n("reproduced")} reproduced` : ""}`,
  ].join("\n");
}

/** What `--json` / `--summary-json` write: the counts of each verdict and every result. */
export function summaryJson(results: ScenarioResult[]): string {
  const n = (v: string) => results.filter((r) => r.verdict === v).length;
  return JSON.stringify({ passed: n("pass"), failed: n("fail"), skipped: n("skip"), reproduced: n("reproduced"), results }, null, 2);
}
