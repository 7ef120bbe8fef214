import { existsSync, realpathSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { resolveOptions, type Suite } from "../../harness/host/container/mod.ts";
import { projectRoot } from "../../harness/shared/project-root.ts";
import { planFiles, unreadableBinds } from "../../harness/host/file-plan.ts";
import type { ScenarioResult } from "../../harness/host/run-in.ts";
import { loadScenarioFile } from "../../harness/shared/load-file.ts";
import { MissingDependencyError } from "../../harness/shared/ts/register.ts";
import { formatTable } from "../../harness/shared/table.ts";
import { isScenarioName, loadScenario, ON_DEMAND_NAMES, SCENARIO_NAMES } from "../../harness/shared/registry.ts";
import { EXIT_CODES } from "../../harness/shared/report.ts";
import { formatSummary, type RunTarget, runSuites, summaryJson, SYSTEMD_SUITES } from "../../harness/host/run-suites.ts";
import { parseFlags } from "../cli/flags.ts";
import { UsageError } from "../cli/usage-error.ts";

export const SCENARIO_HELP = `usage: outlive scenario run FILE|NAME… [--systemd 252|257] [--engine E] [--runtime node|deno]
                             [--reports DIR] [--json FILE] [--cache DIR]
       outlive scenario list

Runs scenario files from any path (a .ts or .js file whose default export is
defineScenario({…}) from "outlive/harness", or an array of them) in a real
systemd container, on systemd 252 and 257 unless --systemd says one. A NAME
that is no file runs outlive's own scenario of that name.
  --systemd V    one systemd version (252 = Debian bookworm, 257 = trixie); default both
  --engine E     the container engine (auto, nspawn, podman, docker, host, vm); default auto
  --runtime R    what runs the scenario's code inside: node (default; .ts stripped by Node itself
                 where it can, else by outlive's own esbuild; no build step) or deno (from
                 node_modules/.bin/deno of the file's project)
  --reports DIR  where <scenario>-<suite>/ report folders go; default reports/ beside each file
  --json FILE    write {passed, failed, skipped, reproduced, results:[…]} to FILE
  --cache DIR    root file systems (default $OUTLIVE_CONTAINER_CACHE, else $XDG_CACHE_HOME/outlive, else ~/.cache/outlive)
Exit: one scenario on one version → its verdict (0 pass or reproduced, 1 fail, 77 skip);
otherwise 1 if any failed, else 0; 69 when a .ts file needs outlive's esbuild and it cannot be found.`;

export async function scenarioCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === "--help" || sub === "-h") {
    console.log(SCENARIO_HELP);
    return sub === undefined ? 2 : 0;
  }
  if (sub === "list") return listScenarios();
  if (sub !== "run") throw new UsageError(`unknown subcommand ${JSON.stringify(sub)}; expected run or list`);
  const { values, positionals } = parse(rest);
  if (values.help) {
    console.log(SCENARIO_HELP);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError("expected at least one scenario FILE (or NAME)");
  const suites = suitesOf(values.systemd);
  const runtime = values.runtime ?? "node";
  if (runtime !== "node" && runtime !== "deno") throw new UsageError(`Expected --runtime to be node or deno, got ${JSON.stringify(runtime)}`);
  const cacheDir = values.cache;
  const container = { engine: values.engine as never, ...(cacheDir ? { cacheDir: resolve(cacheDir) } : {}) };
  let uid: number;
  try {
    uid = resolveOptions(container).uid;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }

  const root = projectRoot();
  const files = positionals.filter((p) => existsSync(p) || !isScenarioName(p));
  const names = positionals.filter((p) => !files.includes(p));
  const denoPath = runtime === "deno" ? findDeno(files, root) : undefined;
  const plan = planFiles({ packageRoot: root, files, reportsDir: values.reports, denoPath });
  const unreadable = unreadableBinds(plan, uid);
  if (unreadable.length > 0) {
    for (const line of unreadable) console.error(`outlive scenario: ${line}`);
    return 1;
  }
  const targets: RunTarget[] = [];
  const refused: ScenarioResult[] = [];
  for (const file of files) {
    const path = resolve(file);
    const where = plan.files.get(path)!;
    try {
      for (const scenario of await loadScenarioFile(file)) {
        targets.push({
          name: scenario.name,
          run: { file: path, scenario, reportsDir: where.reportsDir, paths: plan.paths, driverRuntime: runtime, denoPath, cwd: where.projectDir },
        });
      }
    } catch (error) {
      // Nothing of this run can load without it: say what to install, before any container starts.
      if (error instanceof MissingDependencyError) {
        console.error(`outlive scenario: ${file}: ${error.message} [${error.code}]`);
        return error.exitCode;
      }
      const why = (error as Error).message.split("\n")[0];
      console.error(`outlive scenario: ${why}`);
      for (const suite of suites) refused.push({ name: file, suite, systemd: null, verdict: "fail", why, durationMs: 0, reportDir: "", file: path });
    }
  }
  const started = Date.now();
  const results = [
    ...refused,
    ...(targets.length + names.length > 0
      ? await runSuites({
        names,
        targets,
        suites,
        container: { ...container, binds: plan.paths.binds },
      })
      : []),
  ];
  console.log(`\n${formatSummary(results)}\n(total ${((Date.now() - started) / 1000).toFixed(1)} s)`);
  if (values.json) writeFileSync(values.json, summaryJson(results));
  if (results.length === 1) return EXIT_CODES[results[0].verdict];
  return results.some((r) => r.verdict === "fail") ? 1 : 0;
}

function parse(args: string[]) {
  return parseFlags(args, {
    systemd: { type: "string" },
    engine: { type: "string" },
    runtime: { type: "string" },
    reports: { type: "string" },
    json: { type: "string" },
    cache: { type: "string" },
    help: { type: "boolean", short: "h" },
  });
}

function suitesOf(systemd: string | undefined): Suite[] {
  if (systemd === undefined) return ["bookworm", "trixie"];
  const suite = SYSTEMD_SUITES[systemd];
  if (!suite) throw new UsageError(`Expected --systemd to be 252 or 257, got ${JSON.stringify(systemd)}`);
  return [suite];
}

/** deno from the first file's project, else from outlive's own node_modules; resolved to the real binary. */
function findDeno(files: string[], root: string): string {
  const candidates = [...files.map((f) => join(resolve(f), "..")), root].flatMap((dir) => {
    const found: string[] = [];
    for (let d = dir; ; d = join(d, "..")) {
      found.push(join(d, "node_modules", ".bin", "deno"));
      if (join(d, "..") === d) break;
    }
    return found;
  });
  const hit = candidates.find((c) => existsSync(c));
  if (!hit) throw new UsageError("--runtime deno needs deno in the project's node_modules (npm i -D deno)");
  return realpathSync(hit);
}

async function listScenarios(): Promise<number> {
  const rows: string[][] = [];
  for (const name of [...SCENARIO_NAMES, ...ON_DEMAND_NAMES]) {
    const s = await loadScenario(name);
    const onDemand = (ON_DEMAND_NAMES as readonly string[]).includes(name) ? " (by name only)" : "";
    rows.push([name, `${s.summary}${onDemand}`]);
  }
  console.log(formatTable(rows));
  return 0;
}
