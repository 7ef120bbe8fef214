import { bootContainer, cannotRunHereReason, type ContainerHandle, describeFailure, type EngineChoice, type Suite } from "../container/mod.ts";
import { runScenarioIn, type ScenarioResult } from "./host-run.ts";

/** systemd versions the harness ships against, and the Debian suite that has each. */
export const SYSTEMD_SUITES: Record<string, Suite> = { "252": "bookworm", "257": "trixie" };

export interface SuiteRunOptions {
  names: string[];
  suites: Suite[];
  /** Default `auto`. `host` runs once, on the host's own systemd, whatever `suites` says. */
  engine?: EngineChoice;
  /** Default `<project>/container/cache`. */
  cacheDir?: string;
  log?: (line: string) => void;
}

/**
 * Runs the scenarios on each suite: ONE container per suite, scenarios one
 * after another in it (each with its own storage, prefix and delegated
 * driver unit, all ended after it), then the container is torn down. A
 * machine that cannot boot containers gives every scenario "skip" with the
 * reason; a boot that fails otherwise fails them.
 */
export async function runSuites(options: SuiteRunOptions): Promise<ScenarioResult[]> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const results: ScenarioResult[] = [];
  const engine = options.engine ?? "auto";
  const cannot = await cannotRunHereReason(undefined, engine);
  const suites: (Suite | "host")[] = engine === "host" ? ["host"] : options.suites;
  for (const suite of suites) {
    const failAll = (verdict: "skip" | "fail", why: string) => {
      for (const name of options.names) results.push({ name, suite, systemd: null, verdict, why, durationMs: 0, reportDir: "" });
    };
    if (cannot) {
      log(`skipping every scenario on ${suite}: ${cannot}`);
      failAll("skip", cannot);
      continue;
    }
    let container: ContainerHandle;
    const bootStart = Date.now();
    try {
      container = await bootContainer(suite === "host" ? { engine, cacheDir: options.cacheDir } : { suite, engine, cacheDir: options.cacheDir });
    } catch (error) {
      const { line, exitCode } = describeFailure(error);
      log(line);
      failAll(exitCode === 77 ? "skip" : "fail", line);
      continue;
    }
    log(`${suite}: ${container.info.engine} ${container.info.name} up in ${((Date.now() - bootStart) / 1000).toFixed(1)} s (systemd ${container.info.readiness.systemdVersion})`);
    const stopOnSignal = () => {
      void container.teardown().finally(() => process.exit(130));
    };
    process.once("SIGINT", stopOnSignal);
    process.once("SIGTERM", stopOnSignal);
    try {
      for (const name of options.names) results.push(await runScenarioIn(container, name, log));
    } finally {
      process.off("SIGINT", stopOnSignal);
      process.off("SIGTERM", stopOnSignal);
      const down = await container.teardown();
      if (!down.clean) log(`${suite}: teardown left ${JSON.stringify(down.leftovers)}`);
    }
  }
  return results;
}

/** The summary table, one line per scenario and suite, then the counts. */
export function formatSummary(results: ScenarioResult[]): string {
  const lines = [`${"scenario".padEnd(22)} ${"suite".padEnd(9)} ${"systemd".padEnd(8)} ${"verdict".padEnd(8)} ${"time".padStart(7)}  why`];
  for (const r of results) {
    lines.push(
      `${r.name.padEnd(22)} ${r.suite.padEnd(9)} ${String(r.systemd ?? "-").padEnd(8)} ${r.verdict.padEnd(8)} ${`${(r.durationMs / 1000).toFixed(1)}s`.padStart(7)}  ${r.why ?? ""}`,
    );
  }
  const n = (v: string) => results.filter((r) => r.verdict === v).length;
  lines.push(`${n("pass")} passed, ${n("fail")} failed, ${n("skip")} skipped`);
  return lines.join("\n");
}
