import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { AUTO_ORDER, ENGINE_NAMES, type EngineChoice, type Suite, SUITES, suiteEngineMismatch } from "./container/mod.ts";
import { isScenarioName, ON_DEMAND_NAMES, SCENARIO_NAMES } from "../shared/registry.ts";
import { EXIT_CODES } from "../shared/report.ts";
import { formatSummary, runSuites, summaryJson, SYSTEMD_SUITES } from "./run-suites.ts";
import { junitXml } from "./junit.ts";

const ENGINES = ["auto", ...ENGINE_NAMES];

const USAGE = `usage: scenarios [NAME…] [--systemd 252|257] [--engine E] [--side-by-side] [--summary-json FILE] [--junit FILE] [--list]
  NAME…            scenarios to run (default: all of them)
  --systemd V      only this systemd version (252 = bookworm, 257 = trixie); default both
  --suite S        only this suite: ${SUITES.join(", ")} (bookworm's userland on Debian 11's
                   5.10 kernel, which has no cgroup.kill: --engine vm only); default bookworm and trixie
  --engine E       auto (default: ${AUTO_ORDER.join(", else ")}), ${ENGINE_NAMES.filter((n) => n !== "host" && n !== "vm").join(", ")},
                   host (this machine's own systemd, no container; runs once, on its version),
                   or vm (qemu with the suite's own Debian kernel: KVM, else TCG, tens of seconds a boot)
  --side-by-side   boot the suites' machines at once and run their scenarios side by side (default: one suite after
                   the other); each line still names its scenario and suite
  --summary-json F write {passed, failed, skipped, results:[…]} to F
  --junit F        write JUnit XML to F: one testcase per scenario and systemd version
  --cache-dir D    root file systems, images' sources and run state (default $OUTLIVE_CONTAINER_CACHE, else $XDG_CACHE_HOME/outlive, else ~/.cache/outlive)
  --cuts N         soak-power: how many power cuts (default 30)
  --seed S         soak-power: replay the plan of cuts and choices of seed S (the report prints it)
  --list           print the scenario names and exit
Exit: one scenario on one version → its verdict (0 pass, 1 fail, 77 skip); otherwise 1 if any failed, else 0.`;

/** `npm run scenario(s)` and every scenario file run on its own; returns the exit code. */
export async function scenarioCli(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        systemd: { type: "string" },
        suite: { type: "string" },
        "summary-json": { type: "string" },
        engine: { type: "string" },
        junit: { type: "string" },
        "cache-dir": { type: "string" },
        list: { type: "boolean" },
        "side-by-side": { type: "boolean" },
        cuts: { type: "string" },
        seed: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (values.list) {
    console.log([...SCENARIO_NAMES, ...ON_DEMAND_NAMES.map((n) => `${n} (by name only)`)].join("\n"));
    return 0;
  }
  const unknown = positionals.filter((n) => !isScenarioName(n));
  if (unknown.length > 0) {
    console.error(`no scenario ${unknown.map((n) => JSON.stringify(n)).join(", ")}; known: ${SCENARIO_NAMES.join(", ")}`);
    return 2;
  }
  if (values.systemd !== undefined && !SYSTEMD_SUITES[values.systemd]) {
    console.error(`Expected --systemd to be 252 or 257, got ${JSON.stringify(values.systemd)}`);
    return 2;
  }
  if (values.engine !== undefined && !ENGINES.includes(values.engine)) {
    console.error(`Expected --engine to be one of ${ENGINES.join(", ")}, got ${JSON.stringify(values.engine)}`);
    return 2;
  }
  if (values.suite !== undefined && !(SUITES as readonly string[]).includes(values.suite)) {
    console.error(`Expected --suite to be one of ${SUITES.join(", ")}, got ${JSON.stringify(values.suite)}`);
    return 2;
  }
  if (values.suite !== undefined && values.systemd !== undefined) {
    console.error(`--suite and --systemd both choose the suite: give one of them`);
    return 2;
  }
  const engine = (values.engine ?? "auto") as EngineChoice;
  const mismatch = values.suite === undefined ? null : suiteEngineMismatch(values.suite as Suite, engine);
  if (mismatch) {
    console.error(`Expected --suite ${values.suite} with --engine vm: ${mismatch}`);
    return 2;
  }
  const names = positionals.length > 0 ? positionals : [...SCENARIO_NAMES];
  const suites: Suite[] = values.suite ? [values.suite as Suite] : values.systemd ? [SYSTEMD_SUITES[values.systemd]] : ["bookworm", "trixie"];
  const started = Date.now();
  for (const flag of ["cuts", "seed"] as const) {
    if (values[flag] !== undefined && !/^[0-9]+$/.test(values[flag])) {
      console.error(`Expected --${flag} to be a non-negative integer, got ${JSON.stringify(values[flag])}`);
      return 2;
    }
  }
  const params: Record<string, string> = { ...(values.cuts ? { cuts: values.cuts } : {}), ...(values.seed ? { seed: values.seed } : {}) };
  const results = await runSuites({ names, suites, params, sideBySide: values["side-by-side"] === true, container: { engine, ...(values["cache-dir"] ? { cacheDir: resolve(values["cache-dir"]) } : {}) } });
  console.log(`\n${formatSummary(results)}\n(total ${((Date.now() - started) / 1000).toFixed(1)} s)`);
  if (values["summary-json"]) writeFileSync(values["summary-json"], summaryJson(results));
  if (values.junit) {
    mkdirSync(dirname(resolve(values.junit)), { recursive: true });
    writeFileSync(values.junit, junitXml(results, engine));
  }
  if (results.length === 1) return EXIT_CODES[results[0].verdict];
  return results.some((r) => r.verdict === "fail") ? 1 : 0;
}
