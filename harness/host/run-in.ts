import { chownSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ContainerHandle } from "./container/mod.ts";
import { projectRoot } from "../shared/project-root.ts";
import { DEFAULT_SCENARIO_TIMEOUT_MS, type Scenario } from "../shared/define.ts";
import { loadScenarioFile } from "../shared/load-file.ts";
import { PathMap } from "./path-map.ts";
import { prepareOnHost } from "./prepare.ts";
import { loadScenario } from "../shared/registry.ts";
import { type DriverReport, REBOOT_FILES, REBOOT_COUNT_PARAM, REBOOT_SENT_AFTER_PARAM, type ScenarioReport, type Verdict } from "../shared/report.ts";
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
  /**
   * The built tree whose driver (and so whose lib) runs inside, when not the
   * project's own `dist/` (a test's copy with one change in it). It must lie
   * in the project, so that its imports find the project's node_modules.
   */
  distDir?: string;
  /** Bound on a scenario's reboot (`reboot`), until the machine is ready again. Default 360 000 ms. */
  rebootTimeoutMs?: number;
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
  const cannot = scenario.reboot && !container.canReboot
    ? `it reboots its machine (${scenario.reboot.how}), which only the vm engine can (this is ${container.info.engine})`
    : await prepareOnHost(scenario.prepareOnHost ?? [], projectRoot());
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
  const driverInside = paths.inside(join(options.distDir ?? join(root, "dist"), "harness", "inside", "driver.js"));
  const launcher = options.driverRuntime === "deno"
    ? [paths.inside(options.denoPath ?? join(root, "node_modules", ".bin", "deno")), "run", "-A", "--quiet"]
    : ["/usr/local/bin/node"];
  const prefix = `sc-${name}`;
  const unit = `outlive-driver-${name}-${process.pid}`;
  const timeoutMs = (scenario.timeoutMs ?? DEFAULT_SCENARIO_TIMEOUT_MS) + DRIVER_SLACK_MS;
  const started = Date.now();
  log(`${name} on ${suite} (systemd ${systemd}): running`);

  const driverArgv = (phase: "steps" | "after-reboot", extra: Record<string, string> = {}) => [
    "systemd-run", "--user", "--wait", "--pipe", "--collect", "--quiet",
    `--unit=${phase === "steps" ? unit : `${unit}-after-reboot`}`,
    "-p", "Delegate=yes",
    // A backstop in case the host side dies: systemd ends the driver and its module cgroups.
    "-p", `RuntimeMaxSec=${Math.ceil(timeoutMs / 1000) + 10}`,
    `--working-directory=${options.cwd ? paths.inside(options.cwd) : paths.inside(root)}`,
    "--", ...launcher, driverInside,
    "--scenario", name, "--run-dir", runInside, "--prefix", prefix, "--systemd", String(systemd ?? 0),
    ...(options.file ? ["--file", paths.inside(options.file)] : []),
    ...Object.entries({ ...options.params, ...extra }).flatMap(([key, value]) => ["--param", `${key}=${value}`]),
    ...(phase === "steps" ? [] : ["--phase", phase]),
  ];
  let driverOutput = "";
  let driverExit: number | null = null;
  /** When the host saw the request and sent the reset or reboot: a power cut must come within a second of the writes under test. */
  let rebootFacts: Record<string, unknown> | null = null;
  const tmpfs = Object.entries((scenario.tmpfsStorages ?? {}) as Record<string, string>).map(([label, size]) => ({ size, dir: `${runInside}/storage-${label}` }));
  const disks = Object.entries((scenario.diskStorages ?? {}) as Record<string, string>).map(([label, size]) => ({ size, dir: `${runInside}/storage-${label}`, image: `${DISK_STORAGE_DIR}/${prefix}-${label}.ext4` }));
  try {
    for (const { size, dir } of tmpfs) {
      const uid = container.info.uid;
      const made = await container.exec(["sh", "-c", 'mkdir -p "$1" && mount -t tmpfs -o "size=$2,mode=0700,uid=$3,gid=$3" tmpfs "$1"', "sh", dir, size, String(uid)], { timeoutMs: 20_000 });
      if (made.exitCode !== 0) throw new Error(`could not mount a ${size} tmpfs at ${dir}: ${made.stderr.trim()}`);
    }
    for (const disk of disks) await mountDiskStorage(container, disk, true);
    if (!scenario.reboot) {
      const r = await container.exec(driverArgv("steps"), { user: true, timeoutMs });
      driverOutput = r.stdout + r.stderr;
      driverExit = r.exitCode;
    } else {
      // The steps end by asking for the reboot (a file in the run dir, which the host sees at once); the driver
      // running them never returns: the reboot ends it. The steps after the reboot run in a driver of their own,
      // which may ask again (a soak of power cuts does): each request is a reboot, until a driver ends by itself.
      const request = join(runDir, REBOOT_FILES.request);
      const how = scenario.reboot.how;
      const reboots: Array<Record<string, unknown>> = [];
      let argv = driverArgv("steps");
      for (;;) {
        await container.prepareReboot();
        const running = container.exec(argv, { user: true, timeoutMs }).then(
          (r) => ({ output: r.stdout + r.stderr, exit: r.exitCode as number | null }),
          (e: Error) => ({ output: `the driver could not be run: ${e.message}`, exit: null }),
        );
        // The look for the request stops with the race: left polling, it held the run open up to timeoutMs after the
        // scenario had ended (soak-power's runs stayed on for minutes after their last boot's PASS).
        const looking = new AbortController();
        const asked = await Promise.race([running.then(() => false), waitForFile(request, timeoutMs, looking.signal).then(() => true)]);
        looking.abort();
        if (!asked) {
          const { output, exit } = await running;
          driverOutput += output;
          driverExit = exit;
          break;
        }
        const rebootStarted = Date.now();
        log(`${name} on ${suite}: ${how} reboot ${reboots.length + 1} requested; rebooting`);
        const seenAt = Date.now();
        const { issuedAt, resets } = await container.reboot(how, options.rebootTimeoutMs ?? scenario.reboot.timeoutMs ?? DEFAULT_REBOOT_TIMEOUT_MS);
        for (const reset of resets) log(`${name} on ${suite}: ${reset}`);
        reboots.push({ how, requestSeenAt: new Date(seenAt).toISOString(), issuedAt: new Date(issuedAt).toISOString(), backAfterMs: Date.now() - issuedAt, ...(resets.length ? { resetsAfterStall: resets } : {}) });
        // The first reboot's facts where a scenario that reboots once has always found them; every reboot in the list.
        rebootFacts = { ...reboots[0], ...(reboots.length > 1 ? { count: reboots.length, all: reboots } : {}) };
        log(`${name} on ${suite}: back from the ${how} reboot in ${((Date.now() - rebootStarted) / 1000).toFixed(1)} s`);
        driverOutput += `${(await Promise.race([running, new Promise<{ output: string }>((r) => setTimeout(() => r({ output: "" }), 1_000))])).output}\n--- after reboot ${reboots.length} ---\n`;
        rmSync(request, { force: true });
        for (const disk of disks) await mountDiskStorage(container, disk, false);
        // How long the host took from seeing the request to sending the reset: the steps after add it to their own part.
        argv = driverArgv("after-reboot", { [REBOOT_SENT_AFTER_PARAM]: String(issuedAt - seenAt), [REBOOT_COUNT_PARAM]: String(reboots.length) });
      }
    }
  } catch (error) {
    driverOutput = `the driver could not be run: ${(error as Error).message}`;
  } finally {
    // A machine armed to take a reboot as a reset goes back to ending qemu on one: the scenarios after see a death.
    if (scenario.reboot) await container.endReboots().catch(() => {});
    // Whatever happened, nothing of this scenario stays running in the container.
    await container.exec(["systemctl", "--user", "stop", `${unit}.service`, `${unit}-after-reboot.service`, `${prefix}.slice`], { user: true, timeoutMs: 20_000 }).catch(() => {});
    for (const { dir } of tmpfs) await container.exec(["umount", dir], { timeoutMs: 20_000 }).catch(() => {});
    for (const { dir, image } of disks) await container.exec(["sh", "-c", 'umount "$1"; rm -f "$2"', "sh", dir, image], { timeoutMs: 20_000 }).catch(() => {});
  }
  writeFileSync(join(reportDir, "driver.log"), driverOutput);
  // The console, where the machine has one, beside the report: read and written once, for whichever of the two below asks.
  const consolePath = join(reportDir, "console.log");
  let consoleText: string | null = null;
  const keepConsole = (): string => {
    if (consoleText === null && container.machine.consoleLog) writeFileSync(consolePath, (consoleText = container.machine.consoleLog()));
    return consoleText ?? "";
  };
  // A reboot's shutdown (what systemd stopped, and how) is only on the console: the guest's journal starts again with each boot.
  if (scenario.reboot) keepConsole();

  const driverReportPath = join(runDir, "driver-report.json");
  const beforeRebootPath = join(runDir, REBOOT_FILES.before);
  const driver: DriverReport | null = existsSync(driverReportPath)
    ? JSON.parse(readFileSync(driverReportPath, "utf8"))
    // A driver lost after a reboot (the machine did not come back, say): what the steps found up to the last reboot
    // (checks, marks, facts: a soak's figures) still goes in the report, which fails with the reason.
    : existsSync(beforeRebootPath)
    ? lostAfterReboot((JSON.parse(readFileSync(beforeRebootPath, "utf8")) as { report: DriverReport }).report, `the driver after the last reboot wrote no report (exit ${driverExit}); its output is in driver.log`)
    : null;
  const report: ScenarioReport = {
    ...(driver ?? emptyDriverReport(name, `the driver wrote no report (exit ${driverExit}); its output is in driver.log`)),
    suite,
    systemd,
    cgroupLayout: container.info.unified ? "cgroup v2 only (unified)" : "host layout",
    durationMs: Date.now() - started,
    kept: {},
  };
  if (rebootFacts) report.facts = { ...report.facts, reboot: rebootFacts };
  if (report.verdict === "fail" || report.verdict === "reproduced") {
    // Kept beside the report (not in the container's run dir), so one folder holds everything about the failure.
    const journal = join(reportDir, "journal.txt");
    report.kept.journal = await container.journal().then((text) => {
      writeFileSync(journal, text);
      return journal;
    }).catch((e) => `could not be read: ${(e as Error).message}`);
    report.kept.storage = runDir;
    // The console (a vm guest's: every boot, a panic, a reboot) goes before the machine's teardown removes it.
    if (keepConsole()) report.kept.console = consolePath;
  } else {
    rmSync(runDir, { recursive: true, force: true });
  }
  writeFileSync(join(reportDir, "report.json"), JSON.stringify(report, null, 2));
  writeFileSync(join(reportDir, "timeline.svg"), renderTimeline(report));

  // The driver judged the steps; its verdict and why are the scenario's. The block is logged whole, after the one
  // wait in it, so that suites run side by side do not split it.
  const { why } = report;
  // A machine that died under the driver: CI's printed output is all that reaches a reader, so what it said last is printed too.
  const lastWords = driver ? [] : ((await container.machine.lastWords?.()) ?? []);
  const block = [
    `${name} on ${suite}: ${report.verdict.toUpperCase()}${why ? ` (${why})` : ""} in ${(report.durationMs / 1000).toFixed(1)} s`,
    `  report: ${join(reportDir, "report.json")}  timeline: ${join(reportDir, "timeline.svg")}`,
    // A driver that died before writing its report: its last words are the only account, so show them here too.
    ...(driver ? [] : [`  driver output (last lines): ${driverOutput.trim().split("\n").slice(-6).join(" | ") || "(none)"}`]),
    ...lastWords.map((line) => `  machine: ${line}`),
    ...(report.kept.storage ? [`  kept: journal ${report.kept.journal}, storage ${report.kept.storage}, driver output ${join(reportDir, "driver.log")}${report.kept.console ? `, console ${report.kept.console}` : ""}`] : []),
  ];
  for (const line of block) log(line);
  return { name, suite, systemd, verdict: report.verdict, why, durationMs: report.durationMs, reportDir, facts: report.facts, ...(options.file ? { file: options.file } : {}) };
}

/**
 * Bound on a reboot under a scenario, to a ready user manager. A vm under TCG
 * takes 30–60 s a boot, but a clean reboot (the shutdown, then the boot) with
 * two guests on two cores came back in 45–170 s (2026-12-03, eight clean
 * reboots, bookworm the slower): 240 s left too little room.
 */
const DEFAULT_REBOOT_TIMEOUT_MS = 360_000;

/** Where a scenario's disk storages keep their ext4 images: the machine's own root file system. */
const DISK_STORAGE_DIR = "/var/lib/outlive-harness";

/**
 * Makes (`fresh`) or mounts again (after a reboot) a storage on the
 * machine's own disk: an ext4 image loop-mounted with `commit=600`, and the
 * kernel told to hold dirty pages as long (`vm.dirty_expire_centisecs`,
 * `vm.dirty_writeback_centisecs`), so only what outlive flushes reaches the
 * disk before a power cut. A fresh one is synced once made, so the file
 * system itself survives.
 */
async function mountDiskStorage(container: ContainerHandle, disk: { size: string; dir: string; image: string }, fresh: boolean): Promise<void> {
  const script = [
    "set -eu",
    // No ${…} here: systemd expands those in the command line it is given (before 254 there is no way around it).
    'dir=$1 image=$2 size=$3 uid=$4 fresh=$5 images=$6',
    'mkdir -p "$dir" "$images"',
    'if [ "$fresh" = 1 ]; then rm -f "$image"; truncate -s "$size" "$image"; mkfs.ext4 -q -F -E root_owner="$uid:$uid" "$image"; fi',
    'mount -o loop,commit=600 "$image" "$dir"',
    'chmod 0700 "$dir"',
    "sync",
    "sysctl -q -w vm.dirty_expire_centisecs=60000 vm.dirty_writeback_centisecs=60000",
  ].join("\n");
  const r = await container.exec(["/bin/sh", "-c", script, "sh", disk.dir, disk.image, disk.size, String(container.info.uid), fresh ? "1" : "0", DISK_STORAGE_DIR], { timeoutMs: 60_000 });
  if (r.exitCode !== 0) throw new Error(`could not ${fresh ? "make" : "mount again"} the disk storage ${disk.image} at ${disk.dir}: ${(r.stderr || r.stdout).trim()}`);
}

/** Resolves once `path` exists (checked every 50 ms); never rejects, and gives up silently after `timeoutMs`. */
function waitForFile(path: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const deadline = Date.now() + timeoutMs;
    const look = () => {
      if (signal.aborted) return;
      if (existsSync(path)) return resolve();
      if (Date.now() < deadline) setTimeout(look, 50);
    };
    look();
  });
}

function pickNamed(list: Scenario[], name: string): Scenario {
  const found = list.find((s) => s.name === name);
  if (!found) throw new Error(`no scenario named ${JSON.stringify(name)} in the file (it has ${list.map((s) => s.name).join(", ")})`);
  return found;
}

function lostAfterReboot(before: DriverReport, error: string): DriverReport {
  return { ...before, verdict: "fail", why: error, error, endedAt: new Date().toISOString() };
}

function emptyDriverReport(name: string, error: string): DriverReport {
  const now = new Date().toISOString();
  return {
    scenario: name, verdict: "fail", why: error, skipReason: null, error, startedAt: now, endedAt: now,
    checks: [], tasks: [], incarnations: [], marks: [], facts: {}, storages: [], leftovers: [],
  };
}
