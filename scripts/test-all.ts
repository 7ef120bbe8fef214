#!/usr/bin/env node
/**
 * `npm test`: the Node suite (vitest), the Deno suite (deno test) and the
 * harness scenarios, then one closing line `N passed, N failed, N skipped`.
 * Exits non-zero when anything failed.
 *
 * As root on a machine that lacks what the container scenarios need, it
 * first runs container/install-deps.sh (a no-op when all is there), so the
 * README's one command runs them instead of skipping (`--no-install` not).
 * `--junit DIR` writes DIR/vitest.xml (DIR/vitest-machines.xml for the tests that boot machines, DIR/vitest-vm.xml
 * for the vm engine's), DIR/deno.xml and DIR/scenarios.xml.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { $ } from "zx";
import { projectRoot } from "../harness/shared/project-root.ts";

const { values, positionals: vitestFilters } = parseArgs({
  args: process.argv.slice(2),
  // Positional arguments are vitest's file filters (`npm test -- test/supervisor`).
  allowPositionals: true,
  options: {
    "no-deno": { type: "boolean" },
    "no-scenarios": { type: "boolean" },
    "no-node": { type: "boolean" },
    "no-install": { type: "boolean" },
    junit: { type: "string" },
  },
});

const root = projectRoot();
$.cwd = root;
$.verbose = true;
$.nothrow = true;
// `npm test` compiled dist/ just before; the suites need not build it again.
process.env.OUTLIVE_BUILT = "1";
const junitDir = values.junit ? resolve(values.junit) : null;
if (junitDir) mkdirSync(junitDir, { recursive: true });

if (!values["no-install"] && !values["no-scenarios"] && process.getuid?.() === 0) {
  // Idempotent and quiet when everything is installed; exit 77 (not Debian, no apt) only means the scenarios may skip.
  await $`sh container/install-deps.sh`;
}

interface Tally {
  suite: string;
  passed: number;
  failed: number;
  skipped: number;
  /** The runner failed in a way its counts do not show (crash, compile error). */
  broken: boolean;
  /** Names of the failing tests with the first lines of their errors, repeated at the end. */
  failures?: string[];
}
const tallies: Tally[] = [];

interface VitestJson {
  testResults: { name: string; assertionResults: { status: string; fullName: string; failureMessages?: string[] }[] }[];
}
/** `file › test name` and the first three lines of the error, for each failed test. */
function vitestFailures(j: VitestJson): string[] {
  const out: string[] = [];
  for (const file of j.testResults ?? []) {
    for (const a of file.assertionResults ?? []) {
      if (a.status !== "failed") continue;
      const why = (a.failureMessages ?? []).join("\n").split("\n").slice(0, 3).map((l) => `    ${l}`).join("\n");
      out.push(`${file.name.replace(`${root}/`, "")} › ${a.fullName}\n${why}`);
    }
  }
  return out;
}

/**
 * The vm engine's tests boot qemu guests under software emulation (TCG here): some 30 s of both cores
 * each. They run one file at a time, so that no two guests compete with each other, after the other
 * Node releases and beside the last of the machines pass (see below).
 */
const VM_TESTS = "test/container/vm-";

/**
 * The tests that boot machines or build a release of their own (containers, the previous release, the
 * executable): each keeps both cores busy for a minute or two. They run one file at a time, after the rest.
 */
const MACHINE_TESTS = ["test/container/", "test/compat/", "test/placement/in-container.test.ts", "test/exe/"];

/**
 * The rest runs two files at a time even on two cores (vitest's default there is one): most of a test's time is
 * waiting on the processes it starts, and the suites hold on a busy machine (issue 36, `.ci/loaded`). One file
 * at a time, the Node suite took 20 of CI's 49 minutes (ci7).
 */
const WORKERS = Math.max(2, availableParallelism() - 1);

/**
 * The suites run a second time with the shell wrapper forced (`OUTLIVE_SHIM=none`), so the fallback for a
 * machine with no outlive-shim stays true: the core (start, spawn, kill, end, the supervisor), the
 * placements, the spawner and replay.
 */
const WRAPPER_SUITES = ["test/supervisor", "test/spawn", "test/kill", "test/end", "test/placement", "test/spawner", "test/replay", "test/pty"];

/**
 * The suites run again under each Node release named in `OUTLIVE_TEST_NODES` (paths joined by `:`; `.ci/run`
 * installs Node 22 and 24 there with scripts/node-releases.ts): the library, the CLI, the wire and MCP, and
 * the package as a user imports it. The rest (placements, replay, containers) is the same code on the same
 * kernel, and three whole runs would not fit CI's budget. The folders end in `/`: vitest's filters match any
 * path that contains them, and `test/cli` would take `test/clients` too.
 */
const OTHER_NODE_SUITES = ["test/supervisor/", "test/start/", "test/cli/", "test/rpc/", "test/control/", "test/mcp/", "test/package/exports.test.ts", "test/package/bundle.test.ts"];

/**
 * The CLI's files that the other releases leave to the machine's own Node: what they test lies past the Node
 * code the other CLI files run (the shells' completion scripts, the table layout, a terminal through tmux and
 * script(1)) or is the same CLI path on more ids and finished tasks (several-ids, finished-tasks). They were 93 s
 * of each release's 430 (ci10 of 2026-12-07), on the machines pass's longer branch.
 */
const OTHER_NODE_LEAVE = ["completion", "ps-table", "pty-cli", "several-ids", "finished-tasks"].flatMap((f) => ["--exclude", `test/cli/${f}.test.ts`]);

async function vitestRun(
  suite: string,
  args: string[],
  junitName: string,
  env: Record<string, string> = {},
  node: string | null = null,
  o: { quiet?: boolean } = {},
): Promise<Tally & { held?: string }> {
  const report = join(mkdtempSync(join(tmpdir(), "outlive-vitest-")), "report.json");
  const junit = junitDir ? ["--reporter=junit", `--outputFile.junit=${join(junitDir, junitName)}`] : [];
  // Under another Node, that Node runs vitest and is first on the PATH, so every process a test starts with
  // process.execPath (the CLI, a module, a serve) is that release too.
  const vitest = node === null ? ["npx", "vitest"] : [node, join(root, "node_modules/vitest/vitest.mjs")];
  const path = node === null ? {} : { PATH: `${dirname(node)}:${process.env.PATH ?? ""}` };
  // quiet: the run's output is held (returned as `held`) for the caller to print whole, so runs side by side do not interleave.
  const run = await $({ env: { ...process.env, ...env, ...path }, quiet: o.quiet ?? false })`${vitest} run --reporter=default --reporter=json --outputFile.json=${report} ${junit} ${args}`;
  const held = o.quiet ? `\n== ${suite} ==\n${run.stdout}${run.stderr}` : undefined;
  if (!existsSync(report)) return { suite, passed: 0, failed: 0, skipped: 0, broken: true, held };
  const j = JSON.parse(readFileSync(report, "utf8"));
  rmSync(dirname(report), { recursive: true, force: true });
  return {
    suite,
    passed: j.numPassedTests,
    failed: j.numFailedTests,
    skipped: j.numPendingTests + j.numTodoTests,
    broken: run.exitCode !== 0 && j.numFailedTests === 0,
    failures: vitestFailures(j),
    held,
  };
}

/** The Deno suite; with `quiet` its output is held (as `held`) for the caller to print whole. */
async function denoRun(o: { quiet: boolean }): Promise<Tally & { held?: string }> {
  const junit = junitDir ? [`--junit-path=${join(junitDir, "deno.xml")}`] : [];
  const run = await $({ quiet: o.quiet })`node_modules/.bin/deno test -A --no-check=remote ${junit} test/deno/`;
  const plain = run.stdout.replace(/\x1b\[[0-9;]*m/g, "");
  const m = /(?:ok|FAILED) \| (\d+) passed(?: \((\d+) steps?\))? \| (\d+) failed(?: \| (\d+) ignored)?/.exec(plain);
  return {
    suite: "deno (deno test)",
    passed: m ? Number(m[1]) : 0,
    failed: m ? Number(m[3]) : 0,
    skipped: m?.[4] ? Number(m[4]) : 0,
    broken: !m || (run.exitCode !== 0 && Number(m[3]) === 0),
    // deno closes with a FAILURES block: one `name => file:line` per failed test.
    failures: [...new Set([...plain.matchAll(/^(.+ => .+:\d+:\d+)$/gm)].map((f) => f[1]))],
    held: o.quiet ? `\n== deno (deno test) ==\n${run.stdout}${run.stderr}` : undefined,
  };
}

/** The wrapper-forced pass runs with the whole Node suite, not with a filter. */
const wrapperPass = !values["no-node"] && vitestFilters.length === 0;
if (!values["no-node"]) {
  if (vitestFilters.length > 0) {
    tallies.push(await vitestRun("node (vitest)", vitestFilters, "vitest.xml"));
  } else {
    const machine = MACHINE_TESTS.flatMap((t) => ["--exclude", t.endsWith("/") ? `${t}**` : t]);
    tallies.push(await vitestRun("node (vitest)", [`--maxWorkers=${WORKERS}`, ...machine], "vitest.xml"));
    // The other releases run side by side, each as one vitest worker, and beside the machines pass: their suites
    // mostly wait on processes, and so do the machines (boots, apt, debootstrap). One after the other they took
    // 400 s of CI's budget (ci7: 201 s and 205 s); side by side, after the machines, 335 s (ci16, machines 678 s).
    // Their output is held and printed after the machines pass's, so the two do not interleave.
    const nodes = (process.env.OUTLIVE_TEST_NODES ?? "").split(":").filter(Boolean);
    const others = nodes.map(async (node) => {
      const version = (await $({ quiet: true })`${node} -p process.version`).stdout.trim();
      return vitestRun(`node ${version} (vitest)`, [...OTHER_NODE_SUITES, ...OTHER_NODE_LEAVE], `vitest-${version}.xml`, {}, node, { quiet: true });
    });
    // The vm engine's files start once the other releases have ended, beside the rest of the machines pass, whose
    // tail runs alone otherwise: after it, they cost CI 330 s of its 49 minutes (ci2 of 2026-12-07: machines 709 s,
    // the releases 355 s beside it). The suites hold on a busy machine (issue 36), as under `.ci/loaded`'s stress-ng.
    const othersDone = Promise.all(others);
    const vm = othersDone.then(() => vitestRun("node (vitest, vm engine: one file at a time)", ["--no-file-parallelism", VM_TESTS], "vitest-vm.xml", {}, null, { quiet: true }));
    tallies.push(await vitestRun("node (vitest, machines: one file at a time)", ["--no-file-parallelism", ...MACHINE_TESTS, "--exclude", `${VM_TESTS}*.test.ts`], "vitest-machines.xml"));
    for (const t of [...(await othersDone), await vm]) {
      process.stdout.write(t.held ?? "");
      tallies.push(t);
    }
  }
}

// Beside the scenarios, their output held so that the scenarios' reads whole; printed and counted after them. The
// wrapper-forced pass keeps the cores half busy alone (ci10 of 2026-12-07: 109 s at 47%), the scenarios and Deno
// three quarters (153 s). It ran beside them once before (ci8), and its spawner file then found a task's empty
// cgroup 30 s after its last test: the drain test's task, which the test now waits for (2697bb7).
// The container runs of the placement suite boot machines of their own, whose tasks the variable does not reach.
const beside = !values["no-scenarios"];
const wrapper = wrapperPass
  ? vitestRun("node (vitest, shell wrapper forced)", [...WRAPPER_SUITES, "--exclude", "test/placement/in-container.test.ts"], "vitest-wrapper.xml", { OUTLIVE_SHIM: "none" }, null, { quiet: beside || !values["no-deno"] })
  : null;
const deno = values["no-deno"] ? null : denoRun({ quiet: beside });

let scenarios: Tally | null = null;
if (!values["no-scenarios"] && existsSync(join(root, "dist/harness/run-scenarios.js"))) {
  // The two suites side by side (--side-by-side), beside Deno's suite: one suite after the other
  // the scenarios kept the cores 48% busy (ci7: 280 s), most of a scenario's time being the waits of its tasks.
  const report = join(mkdtempSync(join(tmpdir(), "outlive-scenarios-")), "summary.json");
  const junit = junitDir ? ["--junit", join(junitDir, "scenarios.xml")] : [];
  const run = await $`node dist/harness/run-scenarios.js --side-by-side --summary-json ${report} ${junit}`;
  scenarios = { suite: "scenarios (harness)", passed: 0, failed: 0, skipped: 0, broken: true };
  if (existsSync(report)) {
    const j = JSON.parse(readFileSync(report, "utf8"));
    rmSync(dirname(report), { recursive: true, force: true });
    scenarios = { suite: "scenarios (harness)", passed: j.passed, failed: j.failed, skipped: j.skipped, broken: run.exitCode !== 0 && j.failed === 0 };
  }
}
for (const run of [wrapper, deno]) {
  if (!run) continue;
  const t = await run;
  process.stdout.write(t.held ?? "");
  tallies.push(t);
}
if (scenarios) tallies.push(scenarios);

console.log("");
// CI logs are often cut to their tail: say again here which tests failed and why.
for (const t of tallies) {
  for (const f of t.failures ?? []) console.log(`FAILED ${t.suite}: ${f}`);
}
for (const t of tallies) {
  console.log(`${t.suite.padEnd(22)} ${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped${t.broken ? "  (the runner itself failed: see above)" : ""}`);
}
const sum = (k: "passed" | "failed" | "skipped") => tallies.reduce((n, t) => n + t[k], 0);
const failed = sum("failed") + tallies.filter((t) => t.broken).length;
console.log(`${sum("passed")} passed, ${failed} failed, ${sum("skipped")} skipped`);
process.exitCode = failed > 0 ? 1 : 0;
