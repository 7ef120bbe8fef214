#!/usr/bin/env node
/**
 * The container side of a scenario. Runs inside the container as the user
 * `outlive`, as a user service with `Delegate=yes`, so that (like the field's
 * daemon) it owns a cgroup in which it makes and kills module cgroups, and
 * the modules it starts see the user manager (XDG_RUNTIME_DIR) and place
 * their tasks in systemd user scopes.
 *
 *   node dist/harness/inside/driver.js --scenario NAME --run-dir DIR --prefix P --systemd N
 *
 * Writes `<run-dir>/driver-report.json` (a DriverReport) and exits with the
 * verdict: 0 pass, 1 fail, 77 skip.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ScenarioContext } from "./context.ts";
import { DelegatedCgroup } from "./delegated-cgroup.ts";
import { DEFAULT_SCENARIO_TIMEOUT_MS, type Scenario } from "../shared/define.ts";
import { judge } from "../shared/judge.ts";
import { loadScenarioFile } from "../shared/load-file.ts";
import { loadScenario } from "../shared/registry.ts";
import { type DriverReport, EXIT_CODES, REBOOT_FILES } from "../shared/report.ts";
import { ScenarioSkip } from "../shared/skip.ts";
import { collectTaskFacts } from "./task-facts.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    scenario: { type: "string" },
    "run-dir": { type: "string" },
    prefix: { type: "string" },
    systemd: { type: "string", default: "0" },
    /** A file (path inside the container) holding the scenario named by --scenario, instead of a registered name. */
    file: { type: "string" },
    /** `key=value`, repeatable: what the host side gave the scenario (`RunInOptions.params`), as `ctx.params`. */
    param: { type: "string", multiple: true, default: [] },
    /** `after-reboot`: the machine rebooted under the scenario; run its `reboot.after` with the checks made before. */
    phase: { type: "string", default: "steps" },
  },
});
if (!values.scenario || !values["run-dir"] || !values.prefix) {
  process.stderr.write("usage: driver.js --scenario NAME --run-dir DIR --prefix PREFIX [--systemd N]\n");
  process.exit(2);
}

const runDir = values["run-dir"];
const startedAt = new Date().toISOString();
let scenario: Scenario;
try {
  scenario = values.file ? pick(await loadScenarioFile(values.file), values.scenario) : await loadScenario(values.scenario);
} catch (e) {
  // The host loaded the same file a moment ago; if it fails here, say so in the report, the one place the host reads.
  const now = new Date().toISOString();
  const message = (e as Error).message ?? String(e);
  process.stderr.write(`${message}\n`);
  const { verdict, why } = judge({ skipReason: null, error: message, checks: [] });
  const failed: DriverReport = {
    scenario: values.scenario, verdict, why, skipReason: null, error: message, startedAt, endedAt: now,
    checks: [], tasks: [], incarnations: [], marks: [], facts: {}, storages: [], leftovers: [],
  };
  writeFileSync(join(runDir, "driver-report.json"), JSON.stringify(failed, null, 2));
  process.exit(EXIT_CODES[verdict]);
}

function pick(list: Scenario[], name: string): Scenario {
  const found = list.find((s) => s.name === name);
  if (!found) throw new Error(`${values.file}: has no scenario named ${JSON.stringify(name)} (it has ${list.map((s) => s.name).join(", ")})`);
  return found;
}
if (values.phase !== "steps" && values.phase !== "after-reboot") {
  process.stderr.write(`--phase: expected steps or after-reboot, got ${JSON.stringify(values.phase)}\n`);
  process.exit(2);
}
const afterReboot = values.phase === "after-reboot";
/** What the steps before the reboot found (`ctx.reboot()` wrote it); read back by the driver after it. */
const BEFORE_REBOOT = join(runDir, REBOOT_FILES.before);
const ctx = new ScenarioContext({
  scenario,
  runDir,
  afterReboot,
  // Before a reboot and after one alike: a scenario may reboot its machine several times.
  requestReboot: async () => {
    // No task facts (they are read after the reboot): the request must reach the host at once.
    const before = { report: await reportNow(null, null, null, null, [], false), deliveries: deliveriesNow() };
    writeFileSync(BEFORE_REBOOT, JSON.stringify(before, null, 2));
    writeFileSync(join(runDir, REBOOT_FILES.request), `${scenario.reboot?.how}\n`);
  },
  prefix: values.prefix,
  cgroup: DelegatedCgroup.claim(),
  systemd: Number(values.systemd),
  params: Object.fromEntries(values.param!.map((p) => {
    const eq = p.indexOf("=");
    return eq < 0 ? [p, ""] : [p.slice(0, eq), p.slice(eq + 1)];
  })),
});

// A promise a scenario forgot to handle fails the scenario, but never skips the cleanup and the report.
const stray: string[] = [];
process.on("unhandledRejection", (reason) => {
  stray.push(reason instanceof Error ? (reason.stack ?? reason.message) : String(reason));
  ctx.log(`unhandled rejection: ${stray[stray.length - 1]}`);
});

if (afterReboot) {
  const { report: before, deliveries } = JSON.parse(readFileSync(BEFORE_REBOOT, "utf8")) as { report: DriverReport; deliveries: Array<{ storage: string; id: string }> };
  ctx.deliveries.push(...deliveries);
  ctx.checks.push(...before.checks);
  ctx.marks.push(...before.marks);
  ctx.incarnations.push(...before.incarnations);
  Object.assign(ctx.facts, before.facts);
}
const steps = afterReboot ? scenario.reboot!.after.bind(scenario.reboot) : scenario.inside.bind(scenario);

let skipReason: string | null = null;
let error: string | null = null;
const timeoutMs = scenario.timeoutMs ?? DEFAULT_SCENARIO_TIMEOUT_MS;
let timer: ReturnType<typeof setTimeout> | undefined;
try {
  await Promise.race([
    steps(ctx),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the scenario did not finish within ${timeoutMs} ms`)), timeoutMs);
    }),
  ]);
} catch (e) {
  // By name too: a scenario file may have loaded its own copy of the harness.
  if (e instanceof ScenarioSkip || (e as Error)?.name === "ScenarioSkip") {
    skipReason = (e as ScenarioSkip).reason;
  } else {
    error = (e as Error).stack ?? String(e);
    ctx.log(`error: ${error}`);
  }
} finally {
  clearTimeout(timer);
}
if (error === null && stray.length > 0) error = `unhandled rejection: ${stray[0]}`;
const { verdict, why } = judge({ skipReason, error, checks: ctx.checks, bug: scenario.bug });

const leftovers = await ctx.cleanup();
const report = await reportNow(verdict, why, skipReason, error, leftovers);
writeFileSync(join(runDir, "driver-report.json"), JSON.stringify(report, null, 2));
process.exit(EXIT_CODES[verdict]);

/** The report of what the steps found until now (also what `ctx.reboot()` leaves for the driver after the reboot). */
async function reportNow(verdict: DriverReport["verdict"] | null, why: string | null, skipReason: string | null = null, error: string | null = null, leftovers: string[] = [], withTasks = true): Promise<DriverReport> {
  return {
  scenario: scenario.name,
  verdict: verdict ?? "fail",
  why: verdict === null ? "the machine was rebooted before the scenario ended" : why,
  bug: scenario.bug ?? null,
  // deno-lint-ignore no-explicit-any
  runtime: "Deno" in globalThis ? `deno ${(globalThis as any).Deno.version.deno}` : `node ${process.version}`,
  skipReason,
  error,
  startedAt,
  endedAt: new Date().toISOString(),
  checks: ctx.checks,
  tasks: !withTasks ? [] : await collectTaskFacts(ctx.storages, (storage) => deliveriesNow().filter((d) => d.storage === storage)).catch((e) => {
    ctx.log(`could not read the storages: ${(e as Error).message}`);
    return [];
  }),
  incarnations: [...ctx.daemons.flatMap((d) => d.incarnations(scenario.runtime ?? "node")), ...ctx.incarnations],
  marks: ctx.marks.sort((a, b) => a.at.localeCompare(b.at)),
  facts: ctx.facts,
  storages: [...ctx.storages],
  leftovers,
  };
}

/** Every completion delivered so far, by storage: the scenario daemons' and those other modules reported. */
function deliveriesNow(): Array<{ storage: string; id: string }> {
  return [
    ...ctx.daemons.flatMap((d) => (d.deliveries() as Array<{ id: string }>).map((m) => ({ storage: d.storage, id: m.id }))),
    ...ctx.deliveries,
  ];
}
