import { chownSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ContainerHandle } from "./container/mod.ts";
import { projectRoot } from "../shared/project-root.ts";
import { DEFAULT_SCENARIO_TIMEOUT_MS, type Scenario } from "../shared/define.ts";
import { loadScenarioFile } from "../shared/load-file.ts";
import { PathMap } from "./path-map.ts";
import { prepareOnHost } from "./prepare.ts";
import { loadScenario } from "../shared/registry.ts";
import type { DriverReport, ScenarioReport, Verdict } from "../shared/report.ts";
import { renderTimeline } from "./timeline/timeline-svg.ts";
/** How long past the scenario's own bound the host waits for the driver (start-up, cleanup, writing the report). */
const DRIVER_SLACK_MS = 30_000;

export interface ScenarioResult {
  name: string;
  suite: string;
  systemd: number | null;
  verdict: Verdict;
  /** The skip reason, or the first failed check / error. */
  why: string | null;
  durationMs: number;
  reportDir: string;
  /** What the scenario recorded besides checks (timings, versions). */
  facts?: Record<string, unknown>;
  /** The file it came from, when it was run by path. */
  file?: string;
}

export interface RunInOptions {
  /** The file holding the scenario (any path the container can see through `paths`), instead of a registered name. */
  file?: string;
  /** The scenario itself, when the caller has already loaded it. */
  scenario?: Scenario;
  /** Host folder the report folder `<name>-<suite>/` goes in. Default `harness/reports` of the project. */
  reportsDir?: string;
  /** Which host folders the container sees and where. Default: the project at /work/project only. */
  paths?: PathMap;
  /** What runs the driver (and so the scenario's own code) inside: `node` (default; `.ts` through TypeScript's transpiler) or `deno`. */
  driverRuntime?: "node" | "deno";
  /** The deno binary on the host (in a bound folder), for `driverRuntime: "deno"`. */
  denoPath?: string;
  /** Working directory inside for the driver (Deno reads package.json from here). Default the project. */
  cwd?: string;
  /** Values for the scenario (a bench's `--counts`, say), passed to the driver as `--param key=value` and read inside as `ctx.params`. */
  params?: Record<string, string>;
}

/**
 * Runs one scenario in a booted container: the driver runs inside as a
 * delegated user service and judges; the host reads its report, writes
 * `report.json` and `timeline.svg` under `harness/reports/<name>-<suite>/`,
 * and on a failure keeps the container's journal and the storages.
 */
export async function runScenarioIn(
  container: ContainerHandle,
  name: string,
  log: (line: string) => void,
  options: RunInOptions = {},
): Promise<ScenarioResult> {
  // A file (a user's, a benchmark) instead of a registered scenario: the same driver, the same reports.
  const scenario = options.scenario ?? (options.file ? pickNamed(await loadScenarioFile(options.file), name) : await loadScenario(name));
  const suite = container.info.suite;
  const cannot = await prepareOnHost(scenario.prepareOnHost ?? [], projectRoot());
  if (cannot !== null) {
    log(`${name} on ${suite}: SKIP (${cannot})`);
    return { name, suite, systemd: container.info.readiness.systemdVersion ?? null, verdict: "skip", why: cannot, durationMs: 0, reportDir: "", ...(options.file ? { file: options.file } : {}) };
  }
  // /work/project in a container; the project's own path on the host engine.
  const PROJECT_INSIDE = container.info.projectInside;
  const systemd = container.info.readiness.systemdVersion ?? null;
  const root = projectRoot();
  const paths = options.paths ?? new PathMap(root);
  const reportDir = join(options.reportsDir ?? join(root, "harness", "reports"), `${name}-${suite}`);
  const runDir = join(reportDir, "run");
  rmSync(reportDir, { recursive: true, force: true });
  mkdirSync(runDir, { recursive: true });
  // The driver runs as the container's user (same uid on the host: nspawn maps no ids here) and writes storages in run/.
  chownSync(runDir, container.info.uid, container.info.uid);
  const runInside = paths.inside(runDir);
  const driverInside = paths.inside(join(root, "dist", "harness", "inside", "driver.js"));
  const launcher = options.driverRuntime === "deno"
    ? [paths.inside(options.denoPath ?? join(root, "node_modules", ".bin", "deno")), "run", "-A", "--quiet"]
    : ["/usr/local/bin/node"];
  const prefix = `sc-${name}`;
  const unit = `outlive-driver-${name}-${process.pid}`;
  const timeoutMs = (scenario.timeoutMs ?? DEFAULT_SCENARIO_TIMEOUT_MS) + DRIVER_SLACK_MS;
  const started = Date.now();
  log(`${name} on ${suite} (systemd ${systemd}): running`);

  const argv = [
    "systemd-run", "--user", "--wait", "--pipe", "--collect", "--quiet",
    `--unit=${unit}`,
    "-p", "Delegate=yes",
    // A backstop in case the host side dies: systemd ends the driver and its module cgroups.
    "-p", `RuntimeMaxSec=${Math.ceil(timeoutMs / 1000) + 10}`,
    `--working-directory=${options.cwd ? paths.inside(options.cwd) : paths.inside(root)}`,
    "--", ...launcher, driverInside,
    "--scenario", name, "--run-dir", runInside, "--prefix", prefix, "--systemd", String(systemd ?? 0),
    ...(options.file ? ["--file", paths.inside(options.file)] : []),
    ...Object.entries(options.params ?? {}).flatMap(([key, value]) => ["--param", `${key}=${value}`]),
  ];
  let driverOutput = "";
  let driverExit: number | null = null;
  const tmpfs = Object.entries((scenario.tmpfsStorages ?? {}) as Record<string, string>).map(([label, size]) => ({ size, dir: `${runInside}/storage-${label}` }));
  try {
    for (const { size, dir } of tmpfs) {
      const uid = container.info.uid;
      const made = await container.exec(["sh", "-c", 'mkdir -p "$1" && mount -t tmpfs -o "size=$2,mode=0700,uid=$3,gid=$3" tmpfs "$1"', "sh", dir, size, String(uid)], { timeoutMs: 20_000 });
      if (made.exitCode !== 0) throw new Error(`could not mount a ${size} tmpfs at ${dir}: ${made.stderr.trim()}`);
    }
    const r = await container.exec(argv, { user: true, timeoutMs });
    driverOutput = r.stdout + r.stderr;
    driverExit = r.exitCode;
  } catch (error) {
    driverOutput = `the driver could not be run: ${(error as Error).message}`;
  } finally {
    // Whatever happened, nothing of this scenario stays running in the container.
    await container.exec(["systemctl", "--user", "stop", `${unit}.service`, `${prefix}.slice`], { user: true, timeoutMs: 20_000 }).catch(() => {});
    for (const { dir } of tmpfs) await container.exec(["umount", dir], { timeoutMs: 20_000 }).catch(() => {});
  }
  writeFileSync(join(reportDir, "driver.log"), driverOutput);

  const driverReportPath = join(runDir, "driver-report.json");
  const driver: DriverReport | null = existsSync(driverReportPath) ? JSON.parse(readFileSync(driverReportPath, "utf8")) : null;
  const report: ScenarioReport = {
    ...(driver ?? emptyDriverReport(name, `the driver wrote no report (exit ${driverExit}); its output is in driver.log`)),
    suite,
    systemd,
    cgroupLayout: container.info.unified ? "cgroup v2 only (unified)" : "host layout",
    durationMs: Date.now() - started,
    kept: {},
  };
  if (report.verdict === "fail" || report.verdict === "reproduced") {
    // Kept beside the report (not in the container's run dir), so one folder holds everything about the failure.
    const journal = join(reportDir, "journal.txt");
    report.kept.journal = await container.journal().then((text) => {
      writeFileSync(journal, text);
      return journal;
    }).catch((e) => `could not be read: ${(e as Error).message}`);
    report.kept.storage = runDir;
  } else {
    rmSync(runDir, { recursive: true, force: true });
  }
  writeFileSync(join(reportDir, "report.json"), JSON.stringify(report, null, 2));
  writeFileSync(join(reportDir, "timeline.svg"), renderTimeline(report));

  // The driver judged the steps; its verdict and why are the scenario's.
  const { why } = report;
  log(`${name} on ${suite}: ${report.verdict.toUpperCase()}${why ? ` (${why})` : ""} in ${(report.durationMs / 1000).toFixed(1)} s`);
  log(`  report: ${join(reportDir, "report.json")}  timeline: ${join(reportDir, "timeline.svg")}`);
  // A driver that died before writing its report: its last words are the only account, so show them here too.
  if (!driver) log(`  driver output (last lines): ${driverOutput.trim().split("\n").slice(-6).join(" | ") || "(none)"}`);
  if (report.kept.storage) log(`  kept: journal ${report.kept.journal}, storage ${report.kept.storage}, driver output ${join(reportDir, "driver.log")}`);
  return { name, suite, systemd, verdict: report.verdict, why, durationMs: report.durationMs, reportDir, facts: report.facts, ...(options.file ? { file: options.file } : {}) };
}

function pickNamed(list: Scenario[], name: string): Scenario {
  const found = list.find((s) => s.name === name);
  if (!found) throw new Error(`no scenario named ${JSON.stringify(name)} in the file (it has ${list.map((s) => s.name).join(", ")})`);
  return found;
}

function emptyDriverReport(name: string, error: string): DriverReport {
  const now = new Date().toISOString();
  return {
    scenario: name, verdict: "fail", why: error, skipReason: null, error, startedAt: now, endedAt: now,
    checks: [], tasks: [], incarnations: [], marks: [], facts: {}, storages: [], leftovers: [],
  };
}
